import { HttpStatus, Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { EMAIL_CLAIM_PATH, EMAIL_VERIFY_PATH } from '../account/activation-link';
import { AccountService, type ConfirmationAction } from '../account/account.service';
import { isDatabaseUnavailable } from '../common/database-unavailable';
import { PAGE_SCRIPT, PAGE_STYLE } from './assets';
import {
  ASSET_PATH,
  claimPage,
  confirmPage,
  DOCS_PATH,
  errorPage,
  expiredPage,
  homePage,
  invalidLinkPage,
  RESET_PATH,
  resetPage,
  unavailablePage,
  verifiedPage,
} from './templates';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

const HTML = 'text/html; charset=utf-8';

/**
 * An activation key is a UUID (`randomUUID()`); anything longer or made of other characters
 * names no record, and is answered without asking the database.
 */
const MAX_KEY_LENGTH = 64;
const KEY_SHAPE = /^[A-Za-z0-9-]+$/;

const logger = new Logger('Pages');

/**
 * The small pages of the service itself, outside /api/v1: `/` names the documentation,
 * `/email-verify/<key>` is where the activation mail's link lands, and `/password-reset`
 * drives the public OTP endpoints; `/email-claim/<key>` is the activation mail's second link,
 * where the owner of an address someone else registered secures it. Plain Fastify routes like
 * the Swagger UI's: they are no API operations (not in the OpenAPI document, no JSON
 * envelopes) and leave every API route as it is. They get the same headers as the API (helmet's CSP, no-store, X-Request-Id).
 */
export function servePages(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const account = app.get(AccountService);
  const webClient = app.get<AppConfig>(APP_CONFIG).frontendUrl;

  const index = {
    status: 'success',
    data: { documentation: DOCS_PATH, openapi: '/api/docs-json', api: '/api/v1', password_reset: RESET_PATH },
  };
  fastify.get('/', (request, reply) => {
    void reply.header('Vary', 'Accept');
    if (!prefersHtml(request)) return reply.send(index);
    return reply.type(HTML).send(homePage());
  });
  // The API's root names the docs too: where a newcomer guessing at /api/v1/ looks first.
  fastify.get('/api/v1', (_request, reply) => reply.send(index));
  fastify.get(RESET_PATH, (_request, reply) => reply.type(HTML).send(resetPage()));
  fastify.get(`${ASSET_PATH}/pages.js`, (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').send(PAGE_SCRIPT),
  );
  fastify.get(`${ASSET_PATH}/pages.css`, (_request, reply) =>
    reply.type('text/css; charset=utf-8').send(PAGE_STYLE),
  );

  // A wildcard rather than `:key`: a key past the router's parameter length, or one with a
  // slash in it, still gets this page instead of the API's JSON 404.
  const keyOf = (request: FastifyRequest) => (request.params as Record<string, string | undefined>)['*'];
  const pages: Array<[string, ConfirmationAction, () => string]> = [
    [EMAIL_VERIFY_PATH, 'confirm', confirmPage],
    [EMAIL_CLAIM_PATH, 'claim', claimPage],
  ];
  for (const [base, action, page] of pages) {
    for (const path of [base, `${base}/*`]) {
      // Opening the link changes nothing: mail scanners fetch links before the person does, and
      // would use up the single-use key. The page's button posts to the page's own address.
      fastify.get(path, (request, reply) =>
        isKeyShaped(keyOf(request))
          ? reply.type(HTML).send(page())
          : reply.code(HttpStatus.NOT_FOUND).type(HTML).send(invalidLinkPage()),
      );
      fastify.post(path, (request, reply) => verify(account, webClient, action, keyOf(request), reply));
    }
  }
}

/**
 * The same service call as `GET /api/v1/verify/confirm_email/<key>` (or, for a claim, `POST
 * /api/v1/verify/claim_email/<key>`): single use, 1 hour, one transaction.
 */
async function verify(
  account: AccountService,
  webClient: string | null,
  action: ConfirmationAction,
  key: string | undefined,
  reply: FastifyReply,
): Promise<void> {
  if (!isKeyShaped(key)) {
    await reply.code(HttpStatus.NOT_FOUND).type(HTML).send(invalidLinkPage());
    return;
  }
  try {
    const { answer, passwordToSet } = await account.confirmEmail(key, action);
    if (answer.message === 'Email Verified') {
      await reply.type(HTML).send(verifiedPage(passwordToSet, webClient));
    } else if (answer.message === 'Link Expired' && typeof answer.email === 'string') {
      await reply.code(HttpStatus.GONE).type(HTML).send(expiredPage(answer.email));
    } else {
      await reply.code(HttpStatus.NOT_FOUND).type(HTML).send(invalidLinkPage());
    }
  } catch (error) {
    if (isDatabaseUnavailable(error)) {
      logger.warn(`Database unavailable: ${error instanceof Error ? error.message : String(error)}`);
      await reply.code(HttpStatus.SERVICE_UNAVAILABLE).type(HTML).send(unavailablePage());
      return;
    }
    const errorId = randomUUID();
    logger.error(
      `error_id=${errorId} ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    await reply.code(HttpStatus.INTERNAL_SERVER_ERROR).type(HTML).send(errorPage(errorId));
  }
}

function isKeyShaped(key: string | undefined): key is string {
  return key !== undefined && key.length <= MAX_KEY_LENGTH && KEY_SHAPE.test(key);
}

/** Browsers ask for HTML; curl and API clients (`*\/*`, JSON) get the same links as JSON. */
function prefersHtml(request: FastifyRequest): boolean {
  return /\btext\/html\b/i.test(request.headers.accept ?? '');
}
