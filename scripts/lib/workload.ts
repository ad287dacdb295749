import { randomBytes } from 'node:crypto';
import { HttpClient, HttpResult, Multipart } from './http-client';

export const PASSWORD = 'Load!Test9pw';

export interface LoadUser {
  username: string;
  email: string;
  password: string;
  /** The newest token: a login during the load replaces it, so fresh tokens are used too. */
  token: string;
}

export const OPERATION_KINDS = [
  'login',
  'session-create',
  'session-list',
  'target-create',
  'plugin-upload',
  'catalogue',
  'configuration',
  'plugins-mine',
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export const ROUTE_OF: Record<OperationKind, string> = {
  login: 'POST /login/',
  'session-create': 'POST /sessions/',
  'session-list': 'GET /sessions/',
  'target-create': 'POST /targets/',
  'plugin-upload': 'POST /community-plugins/upload',
  catalogue: 'GET /community-plugins/',
  configuration: 'GET /configuration',
  'plugins-mine': 'GET /community-plugins/mine/',
};

/** Routes that need a token: while the database is down they must answer 503, never 401. */
export const AUTHENTICATED: ReadonlySet<OperationKind> = new Set([
  'session-create',
  'session-list',
  'target-create',
  'plugin-upload',
  'catalogue',
  'configuration',
  'plugins-mine',
]);

const EXPECTED_STATUS: Record<OperationKind, number> = {
  login: 200,
  'session-create': 201,
  'session-list': 200,
  'target-create': 201,
  'plugin-upload': 201,
  catalogue: 200,
  configuration: 200,
  'plugins-mine': 200,
};

export type WriteTable = 'sessions' | 'user_plugins' | 'targets';

/** A write the client asked for; `key` is what identifies its row (a name or a URL). */
export interface Write {
  table: WriteTable;
  owner: string;
  key: string;
}

export interface Outcome {
  kind: OperationKind;
  route: string;
  status: number;
  ms: number;
  /** The expected status, and for login a success body with a token. */
  ok: boolean;
  body: unknown;
  error?: string;
  /** Milliseconds since the workload's epoch. */
  startedAt: number;
  endedAt: number;
  write?: Write;
}

/** A short id that makes every name of this run unique, in letters and digits only (safe in LIKE). */
export function newRunId(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** The run's request types, each one call with a unique payload where it writes. */
export class Workload {
  private sequence = 0;

  constructor(
    private readonly client: HttpClient,
    readonly runId: string,
    readonly epoch = performance.now(),
    private readonly timeoutMs?: number,
  ) {}

  now(): number {
    return performance.now() - this.epoch;
  }

  async perform(kind: OperationKind, user: LoadUser): Promise<Outcome> {
    const n = (this.sequence += 1);
    const startedAt = this.now();
    const { result, write } = await this.send(kind, user, n);
    const endedAt = this.now();
    let ok = result.status === EXPECTED_STATUS[kind];
    if (kind === 'login') {
      const token = (result.body as { status?: string; message?: { 'jwt-token'?: unknown } } | null)
        ?.message?.['jwt-token'];
      ok = ok && typeof token === 'string';
      if (ok) user.token = token as string;
    }
    return {
      kind,
      route: ROUTE_OF[kind],
      status: result.status,
      ms: result.ms,
      ok,
      body: result.body,
      error: result.error,
      startedAt,
      endedAt,
      write,
    };
  }

  private async send(
    kind: OperationKind,
    user: LoadUser,
    n: number,
  ): Promise<{ result: HttpResult; write?: Write }> {
    const auth = { token: user.token, timeoutMs: this.timeoutMs };
    switch (kind) {
      case 'login':
        // By email and by name in turn: the spec looks up both.
        return {
          result: await this.client.post('/api/v1/login/', {
            timeoutMs: this.timeoutMs,
            body: { emailOrUsername: n % 2 === 0 ? user.email : user.username, password: user.password },
          }),
        };
      case 'session-create': {
        const name = `s-${this.runId}-${n}`;
        const result = await this.client.post('/api/v1/sessions/', { ...auth, body: { name } });
        return { result, write: { table: 'sessions', owner: user.username, key: name } };
      }
      case 'session-list':
        return { result: await this.client.get('/api/v1/sessions/', auth) };
      case 'target-create': {
        const url = `http://127.0.0.1:9/${this.runId}/${n}`;
        const result = await this.client.post('/api/v1/targets/', { ...auth, body: { target_url: url } });
        return { result, write: { table: 'targets', owner: user.username, key: url } };
      }
      case 'plugin-upload': {
        const name = `Load ${this.runId} ${n}`;
        const form = new Multipart()
          .field('name', name)
          .field('description', `Load test plugin ${n}`)
          .field('group', 'web')
          .field('type', 'passive')
          .field('author', 'Load Test')
          .file('plugin_file', `load_${n}.py`, benignPlugin(`${this.runId} ${n}`));
        const result = await this.client.post('/api/v1/community-plugins/upload', { ...auth, body: form });
        return { result, write: { table: 'user_plugins', owner: user.username, key: name } };
      }
      case 'catalogue':
        return { result: await this.client.get('/api/v1/community-plugins/', auth) };
      case 'configuration':
        return { result: await this.client.get('/api/v1/configuration', auth) };
      case 'plugins-mine':
        return { result: await this.client.get('/api/v1/community-plugins/mine/', auth) };
    }
  }
}

/** A plugin the static validator accepts, with its own text so each file has its own hash. */
export function benignPlugin(tag: string): Buffer {
  return Buffer.from(
    `DESCRIPTION = ${JSON.stringify(`Load test ${tag}`)}\n\n\ndef run(PluginInfo):\n    return []\n`,
  );
}

/**
 * How a sign-up reads its mail: called before the request that sends a mail of `kind` to
 * `email`, it returns the wait for that mail's code (the activation key, or the OTP).
 */
export type MailWatch = (kind: 'activation' | 'otp', email: string) => () => Promise<string>;

/** Throws unless the answer is 200 with this `message`, naming the step. */
export function expectMessage(step: string, result: HttpResult, message: string): void {
  const body = result.body as { message?: unknown } | null;
  if (result.status !== 200 || body?.message !== message) {
    throw new Error(`${step}: ${result.status} ${JSON.stringify(result.body) ?? result.error}`);
  }
}

/**
 * Registered, activated through the mailed link, its password set again by the mailed OTP (a
 * confirmation keeps it, except for an admin address, which the scripts sign up here too),
 * logged in: the path a person takes, so the account is an ordinary one.
 */
export async function signUp(
  client: HttpClient,
  watch: MailWatch,
  username: string,
  email = `${username}@example.com`,
): Promise<LoadUser> {
  const expect = (step: string, result: HttpResult, message: string) =>
    expectMessage(`${step} for ${username}`, result, message);
  expect(
    'register',
    await client.post('/api/v1/register/', {
      body: { username, email, password: PASSWORD, confirm_password: PASSWORD },
    }),
    'User created successfully',
  );
  const activation = watch('activation', email);
  expect(
    'generate/confirm_email',
    await client.post('/api/v1/generate/confirm_email/', { body: { email } }),
    'Email send successful',
  );
  expect(
    'verify/confirm_email',
    await client.get(`/api/v1/verify/confirm_email/${await activation()}`),
    'Email Verified',
  );
  const otp = watch('otp', email);
  expect(
    'generate/otp',
    await client.post('/api/v1/generate/otp/', { body: { emailOrUsername: email } }),
    'Otp Send Successful',
  );
  expect(
    'new-password',
    await client.post('/api/v1/new-password/', {
      body: { emailOrUsername: email, otp: await otp(), password: PASSWORD },
    }),
    'Password Change Successful',
  );
  const login = await client.post('/api/v1/login/', {
    body: { emailOrUsername: username, password: PASSWORD },
  });
  const token = (login.body as { message?: { 'jwt-token'?: unknown } } | null)?.message?.['jwt-token'];
  if (login.status !== 200 || typeof token !== 'string') {
    throw new Error(`login for ${username}: ${login.status} ${JSON.stringify(login.body)}`);
  }
  return { username, email, password: PASSWORD, token };
}

/** What a sign-up needs of an app: its client and a watch over its mail (app-process's RunningApp has both). */
export interface SignUpTarget {
  client: HttpClient;
  mail: { watch: MailWatch };
}

/** `count` users signed up through `app`, reading the mail it prints, `concurrency` at a time. */
export async function provisionUsers(
  app: SignUpTarget,
  runId: string,
  count: number,
  concurrency = 5,
): Promise<LoadUser[]> {
  const users: LoadUser[] = [];
  let next = 0;
  const one = (index: number) => signUp(app.client, app.mail.watch, `lt${runId}u${index}`);
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const index = (next += 1) - 1;
        users[index] = await one(index);
      }
    }),
  );
  return users;
}

/** Deterministic shuffle (mulberry32), so a run's order can be reproduced from its seed. */
export function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const result = [...items];
  for (let i = result.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [result[i], result[j]] = [result[j], result[i]];
  }
  return result;
}
