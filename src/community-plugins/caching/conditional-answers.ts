import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Inject,
  Injectable,
  NestInterceptor,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, map, mergeMap, Observable, of } from 'rxjs';
import { Clock } from '../../common/clock';
import type { AuthUser } from '../../common/decorators';
import { RouteMetadata } from '../../common/route-metadata';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { presentedTags } from '../../http/entity-tags';
import { AnswerVersionRepository } from './answer-version.repository';

/**
 * What an answer's ETag is made of:
 * - `reader`: a reader's view of the plugins (catalogue pages, one plugin), versioned by
 *   AnswerVersionRepository and by who asks (their view may be the owner's); admins get no
 *   ETag, since their view shows the re-check's verdicts, which no counter versions.
 * - `manifest`: the same version and when the manifest was issued. A manifest is re-signed on
 *   every fetch with a new `expires_at`, so the ETag is weak, and a copy is kept (304) only
 *   while it has more than half of its lifetime left: a poller never holds an expired one.
 * - `key`: the key's fingerprint, from the answer itself (no read at all).
 */
export type ConditionalAnswer = 'reader' | 'manifest' | 'key';

const CONDITIONAL_ANSWER = 'svc:conditionalAnswer';

/** The headers of a conditional answer, for its 200's documentation (RouteOptions.headers). */
export const ETAG_HEADERS = {
  ETag: { description: 'Version of the answer; send it back in `If-None-Match`', schema: { type: 'string' } },
  'Cache-Control': {
    description:
      '`private, no-cache`; `public, no-cache` for the manifest and key with PLUGIN_ANONYMOUS_READS=on',
    schema: { type: 'string' },
  },
};

/**
 * A route whose answer can be revalidated: it carries an ETag and `Cache-Control: no-cache`,
 * and a request whose `If-None-Match` names the current version is answered 304 with no body.
 */
export const Conditional = (kind: ConditionalAnswer) =>
  applyDecorators(
    SetMetadata(CONDITIONAL_ANSWER, kind),
    UseInterceptors(ConditionalAnswerInterceptor),
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'The ETag of the copy the client holds',
    }),
    ApiResponse({
      status: 304,
      description: 'The copy named by `If-None-Match` is current: no body',
      headers: ETAG_HEADERS,
    }),
  );

/** A 304: no body, the kind's headers and the tag of the copy that is current. */
const notModifiedAnswer = (headers: Record<string, string>, etag: string) =>
  new Response(null, { status: 304, headers: { ...headers, ETag: etag } });

/** A reader's view depends on who reads it (the owner's may differ): their id is in its tag. */
const readerTag = (callerId: number | undefined, version: string) => `"r${callerId ?? 0}.${version}"`;

/**
 * A write answered by this process may have raised the version: the next full answers read it
 * again rather than tag themselves with the one read before (AnswerVersionRepository.recent).
 */
export function forgetVersionsAfterWrites(app: NestFastifyApplication): void {
  const versions = app.get(AnswerVersionRepository);
  app
    .getHttpAdapter()
    .getInstance()
    // Before the answer is written (the write has committed by then): a client that reads it
    // and asks again is answered with the version read afresh.
    .addHook('onSend', (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') versions.forget();
      done(null, payload);
    });
}

@Injectable()
export class ConditionalAnswerInterceptor implements NestInterceptor {
  private readonly halfLifeMs: number;
  private readonly kind: RouteMetadata<ConditionalAnswer>;

  constructor(
    reflector: Reflector,
    private readonly versions: AnswerVersionRepository,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.halfLifeMs = (config.pluginManifestTtlSeconds * 1000) / 2;
    this.kind = new RouteMetadata(reflector, CONDITIONAL_ANSWER);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const kind = this.kind.of(context)!;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const caller = request.user;
    const headers = this.headersOf(kind);
    const presented = presentedTags(request.headers['if-none-match']);
    const notModified = (etag: string) => notModifiedAnswer(headers, etag);
    const send = (etag: string | null) => (data: unknown) => {
      void reply.headers(etag === null ? headers : { ...headers, ETag: etag });
      return data;
    };

    if (kind === 'key') {
      return next.handle().pipe(
        map((data) => {
          const etag = `"k.${(data as { fingerprint: string }).fingerprint}"`;
          return presented.some((tag) => tag === '*' || tag === etag) ? notModified(etag) : send(etag)(data);
        }),
      );
    }
    if (kind === 'reader' && caller?.isAdmin) return next.handle().pipe(map(send(null)));
    const recent = kind === 'reader' && presented.length === 0 ? this.versions.recent() : null;
    // No copy to compare: a version read a moment ago tags the full answer (it is not newer
    // than the rows the handler reads next).
    if (recent !== null) return next.handle().pipe(map(send(readerTag(caller?.id, recent))));

    // Read before the answer: a write between the two makes the tag older than the answer
    // (the next poll gets it again), never newer (which would keep a stale copy).
    return from(this.versions.current()).pipe(
      mergeMap((version) => {
        const current = this.notModifiedTag(kind, caller, presented, version);
        if (current !== null) return of(notModified(current));
        if (kind === 'reader') return next.handle().pipe(map(send(readerTag(caller?.id, version))));
        return next.handle().pipe(
          map((data) => {
            const issued = Math.floor(Date.parse((data as { issued_at: string }).issued_at) / 1000);
            return send(`W/"m.${version}.${issued}"`)(data);
          }),
        );
      }),
    );
  }

  /**
   * The headers every answer of this kind carries. Shared caches may keep what is the same for
   * everyone who may read it; Vary keeps a reader's copy from reaching another reader (or an
   * admin) all the same.
   */
  headersOf(kind: ConditionalAnswer): Record<string, string> {
    const shared = kind !== 'reader' && this.config.pluginAnonymousReads;
    return { 'Cache-Control': `${shared ? 'public' : 'private'}, no-cache`, Vary: 'Authorization' };
  }

  /**
   * The ETag of the 304 when a presented tag names the current `version` of a reader's view or
   * manifest (not of an admin's reader view, which has no tag), else null.
   */
  notModifiedTag(
    kind: Exclude<ConditionalAnswer, 'key'>,
    caller: AuthUser | undefined,
    presented: readonly string[],
    version: string,
  ): string | null {
    if (kind === 'reader') {
      if (caller?.isAdmin) return null;
      const etag = readerTag(caller?.id, version);
      return presented.some((tag) => tag === '*' || tag === etag) ? etag : null;
    }
    const fresh = presented.find((tag) => this.freshManifestTag(tag, version));
    return fresh === undefined ? null : `W/${fresh}`;
  }

  /** A manifest tag of this version whose copy has more than half of its lifetime left. */
  private freshManifestTag(tag: string, version: string): boolean {
    const match = /^"m\.([\d.]+)\.(\d+)"$/.exec(tag);
    if (!match || match[1] !== version) return false;
    return Number(match[2]) * 1000 + this.halfLifeMs > this.clock.now().getTime();
  }
}
