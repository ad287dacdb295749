import { HttpStatus } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { FlagArg, IntegerArg, TextArg } from '../../common/args';
import { MAX_ID, textValues } from '../../common/request-params';
import { FailWith } from '../../common/validation';
import { parseTargetUrl, ParsedTargetUrl, TARGET_URL_MAX } from '../target-url';

/**
 * The largest page of targets: absent or -1 (the original client's "all") means this many, and
 * X-Total-Count still counts every match. With TARGET_URL_MAX (2048) for target_url and
 * host_path, an answer holds at most about 2.2 MB.
 */
export const MAX_LIMIT = 500;
export const INCORRECT_PARAMETERS = 'Incorrect query parameters';

/** A target as the API shows it. */
@ApiSchema({ name: 'Target' })
export class TargetView {
  @ApiProperty()
  id!: number;

  @ApiProperty({ description: 'In normal form, without fragment' })
  target_url!: string;

  @ApiProperty({ enum: ['http', 'https'] })
  url_scheme!: string;

  @ApiProperty({ description: 'Lower case; IPv6 without brackets; IDN in punycode' })
  host_name!: string;

  @ApiProperty({ type: 'integer' })
  port_number!: number;

  @ApiProperty({ description: 'Path and query' })
  host_path!: string;

  @ApiProperty()
  scope!: boolean;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Always null: this service does not resolve hosts (the original client shows it beside the URL)',
  })
  host_ip!: null;

  @ApiProperty({
    type: 'integer',
    description:
      'Highest user rank of its findings; -1 without findings, as in the original (always -1 here)',
  })
  max_user_rank!: number;

  @ApiProperty({
    type: 'integer',
    description: 'Highest framework rank of its findings; -1 without findings (always -1 here)',
  })
  max_owtf_rank!: number;
}

/** The header of `GET targets/` that counts the matches over all pages. */
export const TOTAL_COUNT_HEADER = 'X-Total-Count';

/** The list's filters and page; 400 names `limit` or `offset` when one is out of range. */
@FailWith(HttpStatus.BAD_REQUEST, INCORRECT_PARAMETERS)
export class TargetListArgs {
  @ApiPropertyOptional({ description: 'This URL (compared in normal form)' })
  @TextArg({ emptyIsAbsent: true })
  target_url?: string;

  @ApiPropertyOptional({ description: 'This host' })
  @TextArg({ emptyIsAbsent: true })
  host_name?: string;

  @ApiPropertyOptional({ description: 'Part of the URL' })
  @TextArg({ emptyIsAbsent: true })
  search?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: -1,
    maximum: MAX_LIMIT,
    description: `1 to ${MAX_LIMIT}; absent or -1 (as in the original, "all"): up to ${MAX_LIMIT}, X-Total-Count counting all`,
  })
  @IntegerArg({
    min: 1,
    max: MAX_LIMIT,
    fallback: MAX_LIMIT,
    alsoFallback: ['-1'],
    message: `must be an integer from 1 to ${MAX_LIMIT}, or -1 for all`,
  })
  limit = MAX_LIMIT;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IntegerArg({ min: 0, max: MAX_ID, fallback: 0, message: 'must be an integer of at least 0' })
  offset = 0;
}

/** A new target: its URL first (`Invalid target URL`), then the scope flag. */
@FailWith(HttpStatus.BAD_REQUEST, INCORRECT_PARAMETERS)
export class NewTargetArgs {
  @ApiProperty({
    type: String,
    maxLength: TARGET_URL_MAX,
    description: 'An absolute http(s) URL with a host and without credentials',
  })
  @FailWith(HttpStatus.BAD_REQUEST, 'Invalid target URL')
  @Transform(({ value }) => parseTargetUrl(textValues(value)[0]))
  @ValidateBy({ name: 'isTargetUrl', validator: { validate: (value: unknown) => value !== null } })
  target_url: ParsedTargetUrl | null = null;

  @ApiPropertyOptional({ type: Boolean, default: true, description: '`true`/`false` (or `1`/`0`)' })
  @FlagArg()
  scope?: boolean;
}
