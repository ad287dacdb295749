import { PATH_METADATA } from '@nestjs/common/constants';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminGuard } from '../../auth/admin.guard';
import { JwtAuthGuard } from '../../auth/jwt-auth.guard';
import type { RouteRef } from '../../common/route-metadata';
import { presentedTags } from '../../http/entity-tags';
import { isMultipart } from '../../http/multipart-fields.guard';
import { CommunityPluginsController } from '../community-plugins.controller';
import { AnswerVersionRepository } from './answer-version.repository';
import { ConditionalAnswerInterceptor, type ConditionalAnswer } from './conditional-answers';

type PolledKind = Exclude<ConditionalAnswer, 'key'>;

/** The routes an install polls: the catalogue's first pages and the manifest. */
const POLLED: ReadonlyArray<{ handler: keyof CommunityPluginsController; kind: PolledKind }> = [
  { handler: 'list', kind: 'reader' },
  { handler: 'manifest', kind: 'manifest' },
];

interface PolledRoute {
  route: RouteRef;
  kind: PolledKind;
}

const joinPath = (...parts: string[]) =>
  '/' +
  parts
    .flatMap((part) => part.split('/'))
    .filter((part) => part !== '')
    .join('/');

/**
 * A poll whose copy is current is answered 304 here, in a Fastify preHandler, before Nest's
 * pipeline (its router context, rxjs, the interceptors), which cost more than the poll itself
 * (docs/decisions/early-revalidation.md). The answer is the one Nest's pipeline gives: the
 * caller is admitted by the guards' own `admit`, the version is read fresh, and the tag is
 * compared by ConditionalAnswerInterceptor's own `notModifiedTag`; a refusal or an error goes
 * to the exception filter. Anything else (no If-None-Match, an admin's reader view, a tag that
 * is not current) goes on to Nest unchanged, where the same guards and interceptor decide it; a
 * caller admitted here is not authenticated twice.
 */
export function revalidateEarly(app: NestFastifyApplication, prefix: string): void {
  const jwt = app.get(JwtAuthGuard);
  const admin = app.get(AdminGuard);
  const conditional = app.get(ConditionalAnswerInterceptor);
  const versions = app.get(AnswerVersionRepository);

  const controllerPath = Reflect.getMetadata(PATH_METADATA, CommunityPluginsController) as string;
  const routes = new Map<string, PolledRoute>();
  /** By the url of a request's route, as Fastify registered it: one entry per route. */
  const byUrl = new Map<string, PolledRoute | null>();
  for (const { handler, kind } of POLLED) {
    const method = CommunityPluginsController.prototype[handler] as (...args: never[]) => unknown;
    const path = Reflect.getMetadata(PATH_METADATA, method) as string;
    const route = { getClass: () => CommunityPluginsController, getHandler: () => method } as RouteRef;
    routes.set(joinPath(prefix, controllerPath, path).toLowerCase(), { route, kind });
  }

  app
    .getHttpAdapter()
    .getInstance()
    // A callback hook: the answer sent, `done` is not called, so Nest's handler never runs.
    // (An async hook that sends goes on to the handler when an onSend hook is still running.)
    .addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      const polled = pollOf(request);
      if (polled === null) return done();
      currentTag(request, polled).then(
        (etag) => {
          if (etag === null) done();
          // No body, so no web Response: Fastify's HEAD routes would measure it as text.
          else
            void reply
              .code(304)
              .headers({ ...conditional.headersOf(polled.kind), ETag: etag })
              .send();
        },
        // A refusal, or a database past its deadline, is answered at once as Nest answers it:
        // Nest makes Fastify's error handler its exception filters (AllExceptionsFilter reads
        // only the request and the reply), so the database is not waited for a second time.
        (error: Error) => done(error),
      );
    });

  function pollOf(request: FastifyRequest): PolledRoute | null {
    if (request.method !== 'GET' && request.method !== 'HEAD') return null;
    if (request.headers['if-none-match'] === undefined || isMultipart(request)) return null;
    const url = request.routeOptions.url ?? '';
    let polled = byUrl.get(url);
    if (polled === undefined) byUrl.set(url, (polled = routes.get(joinPath(url).toLowerCase()) ?? null));
    return polled;
  }

  /** The 304's tag when the caller is admitted and presents the current version, else null. */
  async function currentTag(request: FastifyRequest, polled: PolledRoute): Promise<string | null> {
    const presented = presentedTags(request.headers['if-none-match']);
    if (presented.length === 0) return null;
    // Begun with the caller's admission, so a poll waits for one round trip, not two; a read
    // begun before the caller is admitted is as fresh as one begun after.
    const version = versions.current();
    version.catch(() => undefined); // a refusal is the answer then, not this read's failure
    await jwt.admitEarly(polled.route, request);
    admin.admit(polled.route, request);
    if (polled.kind === 'reader' && request.user?.isAdmin) return null;
    return conditional.notModifiedTag(polled.kind, request.user, presented, await version);
  }
}
