import type { TestApp } from './test-app';

export type Method = 'get' | 'post' | 'patch' | 'delete' | 'put' | 'options' | 'head';

/** Whoever calls: a signed-in user's token, or `null` for an anonymous call. */
export interface Caller {
  token: string;
}

/**
 * A request to `/api/v1/<path>` through supertest on the app's HTTP server, with the caller's
 * bearer token when there is one.
 */
export function api(t: TestApp, caller: Caller | null, method: Method, path: string) {
  const request = t.http()[method](`/api/v1/${path}`);
  return caller ? request.set('Authorization', `Bearer ${caller.token}`) : request;
}
