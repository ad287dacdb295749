import { HttpStatus } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../common/api-error';
import type { Limit, Taken } from './rate-limiter';

/** One quota of a route, named as its RateLimit-Policy and RateLimit fields name it. */
export interface Quota extends Limit {
  name: string;
}

/**
 * The RateLimit-Policy and RateLimit fields of the IETF httpapi draft
 * (draft-ietf-httpapi-ratelimit-headers: Structured Field lists, `"name";q=<quota>;w=<window s>`
 * and `"name";r=<remaining>;t=<seconds>`), so a client sees its budget before a 429.
 *
 * RateLimit tells only the counters that count the caller's own requests (its address, its
 * address with the identifier it names): a count that everyone shares (an identifier's or a
 * mailbox's) would tell a stranger how often others asked for it, so it is told only by the 429
 * that it refuses, with r=0. `t` is the seconds until the window's oldest hit ages out (the
 * windows slide), and on a refusal the same as Retry-After.
 */
export class LimitHeaders {
  private readonly counters: string[] = [];

  constructor(
    private readonly reply: FastifyReply,
    quotas: readonly Quota[],
  ) {
    reply.header(
      'RateLimit-Policy',
      quotas.map((quota) => `"${quota.name}";q=${quota.limit};w=${quota.windowMs / 1000}`).join(', '),
    );
  }

  /** Awaits a take of the quota `name`; a refusal tells that quota as spent before it is thrown on. */
  async taking(name: string, take: Promise<Taken>, { own = false } = {}): Promise<Taken> {
    try {
      const taken = await take;
      if (own) this.counters.push(counter(name, taken.remaining, taken.resetMs / 1000));
      return taken;
    } catch (error) {
      if (error instanceof ApiError && error.getStatus() === HttpStatus.TOO_MANY_REQUESTS) {
        this.counters.push(counter(name, 0, Number(error.headers['Retry-After'])));
        this.tell();
      }
      throw error;
    }
  }

  /** The RateLimit field with the counters taken so far. */
  tell(): void {
    if (this.counters.length > 0) this.reply.header('RateLimit', this.counters.join(', '));
  }
}

const counter = (name: string, remaining: number, seconds: number) =>
  `"${name}";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(seconds))}`;
