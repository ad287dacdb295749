import { HttpStatus, Injectable, PipeTransform } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { AUDIT_ACTIONS, AuditAction } from './audit-entry.entity';
import type { AuditFilter } from './audit-log.service';

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 200;
export const SUBJECT_MAX_LENGTH = 128;

/** `limit`, `offset`, `action`, `subject`; each malformed or repeated one named in a 400. */
export function parseAuditQuery(raw: Record<string, unknown>): AuditFilter {
  const errors: Record<string, string> = {};
  const text = (name: string): string | undefined => {
    const value = raw[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') {
      errors[name] = 'must be given once';
      return undefined;
    }
    return value;
  };
  const integer = (name: string, fallback: number, min: number): number => {
    const value = text(name);
    if (value === undefined) return fallback;
    if (!/^\d{1,10}$/.test(value) || Number(value) < min) {
      errors[name] = `must be an integer of at least ${min}`;
      return fallback;
    }
    return Number(value);
  };
  const limit = Math.min(integer('limit', AUDIT_DEFAULT_LIMIT, 1), AUDIT_MAX_LIMIT);
  const offset = integer('offset', 0, 0);
  const actionText = text('action');
  const action = AUDIT_ACTIONS.find((known) => known === actionText);
  if (actionText !== undefined && !action) errors.action = `must be one of ${AUDIT_ACTIONS.join(', ')}`;
  const subject = text('subject');
  if (subject !== undefined && subject.length > SUBJECT_MAX_LENGTH)
    errors.subject = `must be at most ${SUBJECT_MAX_LENGTH} characters`;
  if (Object.keys(errors).length > 0)
    throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid query parameters', errors);
  return { limit, offset, action: action as AuditAction | undefined, subject };
}

@Injectable()
export class ParseAuditQueryPipe implements PipeTransform<Record<string, unknown>, AuditFilter> {
  transform(raw: Record<string, unknown>): AuditFilter {
    return parseAuditQuery(raw);
  }
}
