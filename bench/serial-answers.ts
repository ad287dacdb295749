/** Answers sent a few at a time on kept-alive connections, as bench/instructions.ts and bench/cpu-per-answer.ts count them. */
import { Agent, request } from 'node:http';

export const IN_FLIGHT = 2;

/** One answer; its status must be one of those expected. */
export function get(
  agent: Agent,
  origin: string,
  path: string,
  headers: Record<string, string>,
  statuses: number[],
) {
  return new Promise<{ status: number; etag?: string }>((resolve, reject) => {
    const call = request(`${origin}${path}`, { agent, headers }, (response) => {
      response.resume();
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        if (!statuses.includes(status))
          reject(new Error(`${path} answered ${status}, not ${statuses.join(' or ')}`));
        else resolve({ status, etag: response.headers.etag });
      });
    });
    call.on('error', reject);
    call.end();
  });
}

/**
 * The ETag that the next request is answered 304 with. A full answer may carry a tag a second
 * old (docs/decisions/answer-versions.md), and the server's background work (the re-check after
 * start-up) may write meanwhile: asked with it, the server answers the current page and tag.
 */
export async function currentTag(
  agent: Agent,
  origin: string,
  path: string,
  headers: Record<string, string>,
) {
  let tag: string | undefined;
  for (let attempt = 0; attempt < 10; attempt++) {
    const asked = tag === undefined ? headers : { ...headers, 'if-none-match': tag };
    const answer = await get(agent, origin, path, asked, [200, 304]);
    if (answer.status === 304 && tag !== undefined) return tag;
    if (answer.status !== 200 || !answer.etag)
      throw new Error(`${path} answered ${answer.status} without an ETag`);
    tag = answer.etag;
  }
  throw new Error(`${path} never answered 304: its version kept changing`);
}

/** `count` answers, `inFlight` at a time. */
export async function answers(
  count: number,
  send: () => Promise<unknown>,
  inFlight = IN_FLIGHT,
): Promise<void> {
  let left = count;
  const lane = async () => {
    while (left-- > 0) await send();
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

export interface Route {
  /** How the command line names it (chosenRoutes). */
  key: 'sessions' | 'catalogue' | 'revalidated';
  name: string;
  path: string;
  /** The baseline answers only the contract's routes it was written for. */
  baseline: boolean;
  /** Sends the ETag of a first answer back, so the app answers 304. */
  revalidate?: boolean;
}

export const ROUTES: Route[] = [
  { key: 'sessions', name: 'GET /api/v1/sessions/ (10 sessions)', path: '/api/v1/sessions/', baseline: true },
  {
    key: 'catalogue',
    name: 'GET /api/v1/community-plugins/ (200 approved, limit 50)',
    path: '/api/v1/community-plugins/',
    baseline: true,
  },
  {
    key: 'revalidated',
    name: 'the same page, If-None-Match current (304)',
    path: '/api/v1/community-plugins/',
    baseline: false,
    revalidate: true,
  },
];

/**
 * The routes the command line names by key (all of them when it names none): a commit older
 * than the ETags has no `revalidated` route to measure.
 */
export function chosenRoutes(args: string[]): Route[] {
  if (args.length === 0) return ROUTES;
  const unknown = args.filter((arg) => !ROUTES.some((route) => route.key === arg));
  if (unknown.length > 0)
    throw new Error(`unknown route ${unknown.join(', ')}: ${ROUTES.map((route) => route.key).join(', ')}`);
  return ROUTES.filter((route) => args.includes(route.key));
}

/**
 * What sends one answer of `route` as the seeded reader. Revalidating, an answer 200 (the
 * version moved: the server's own background work writes too) takes its new tag and is counted
 * in `full`.
 */
export async function sender(agent: Agent, origin: string, route: Route, token: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  const statuses = route.revalidate ? [304, 200] : [200];
  if (route.revalidate) headers['if-none-match'] = await currentTag(agent, origin, route.path, headers);
  const counts = { full: 0 };
  const send = async () => {
    const answer = await get(agent, origin, route.path, headers, statuses);
    if (route.revalidate && answer.status === 200) {
      counts.full += 1;
      if (answer.etag) headers['if-none-match'] = answer.etag;
    }
  };
  return { send, counts };
}
