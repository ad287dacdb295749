import { ApiProperty } from '@nestjs/swagger';
import type { AuthUser } from '../common/decorators';

/** The caller, as `me/` (and `community-plugins/me/`) shows them. */
export class CurrentUserView {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  email!: string;

  @ApiProperty()
  is_admin!: boolean;
}

export const currentUserView = (caller: AuthUser): CurrentUserView => ({
  id: caller.id,
  name: caller.name,
  email: caller.email,
  is_admin: caller.isAdmin,
});
