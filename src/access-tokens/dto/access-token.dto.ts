import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { TextArg, TextArgs } from '../../common/args';
import { type AccessScope, TOKEN_SCOPES } from '../../common/access-scopes';

/**
 * A new token's arguments, as text: the service checks them in order, each with a message of
 * its own (access-tokens.service.ts).
 */
export class NewAccessTokenArgs {
  @ApiPropertyOptional({ description: 'What the token is for, 1 to 100 characters' })
  @TextArg()
  name?: string;

  @ApiPropertyOptional({
    description: 'One or more of `read`, `upload` and (admins only) `review`: repeated, or comma-separated',
    type: [String],
  })
  @TextArgs()
  scopes: string[] = [];

  @ApiPropertyOptional({ description: 'Days until it expires: 1 to 365, 90 when absent' })
  @TextArg()
  expires_in_days?: string;
}

/** A token as its owner sees it: never its secret, which only the creation shows. */
@ApiSchema({ name: 'AccessToken' })
export class AccessTokenView {
  @ApiProperty()
  id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: TOKEN_SCOPES, isArray: true })
  scopes!: AccessScope[];

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time' })
  expires_at!: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'Within a minute' })
  last_used_at!: string | null;
}

/** The answer to a creation: the view and, this once, the secret. */
@ApiSchema({ name: 'NewAccessToken' })
export class NewAccessTokenView extends AccessTokenView {
  @ApiProperty({ description: '`svcpat_` and 43 base64url characters (256 random bits); shown only here' })
  token!: string;
}
