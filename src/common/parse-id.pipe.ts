import { Injectable, PipeTransform } from '@nestjs/common';
import { parseId } from './request-params';

/**
 * The one reading of an id in a path: `null` when the text names no row (malformed, zero,
 * a leading zero, out of range), which each service answers as it answers an unknown id,
 * in the order of its own checks. An absent optional segment stays `undefined`.
 */
@Injectable()
export class ParseIdPipe implements PipeTransform<string | undefined, number | null | undefined> {
  transform(value: string | undefined): number | null | undefined {
    return value === undefined ? undefined : parseId(value);
  }
}
