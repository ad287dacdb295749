/**
 * The data the scenarios read, made through the real API (registration, login, sessions,
 * uploads through the validator, approvals by an admin). Only activation and the password are
 * a direct UPDATE: confirmation keeps no password (it is set by a mailed OTP), the mailed
 * round trips are not what is measured, and skipping them keeps SMTP out.
 */
import { hash } from '@node-rs/bcrypt';
import type { DataSource } from 'typeorm';

export const BENCH_PASSWORD = 'Bench!Passw0rd';
export const ADMIN_EMAIL = 'bench-admin@example.com';

export interface BenchUser {
  username: string;
  email: string;
  token: string;
}

export interface Seeded {
  admin: BenchUser;
  /** Owns the sessions and reads the catalogue (not an admin: the public view). */
  reader: BenchUser;
  /** Logs in during the login scenarios, so its token records stay apart. */
  loginUser: BenchUser;
}

export interface SeedOptions {
  sessions: number;
  approvedPlugins: number;
  /** Of the seeded passwords' hashes: the app's BCRYPT_COST (default 12). */
  bcryptCost?: number;
}

async function call(
  origin: string,
  method: string,
  path: string,
  options: { token?: string; json?: unknown; form?: FormData; expect: number },
): Promise<unknown> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | FormData | undefined = options.form;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(origin + path, { method, headers, body });
  const text = await response.text();
  if (response.status !== options.expect) {
    throw new Error(`seeding: ${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  }
  return JSON.parse(text) as unknown;
}

async function register(origin: string, username: string, email: string): Promise<void> {
  const body = (await call(origin, 'POST', '/api/v1/register/', {
    json: { username, email, password: BENCH_PASSWORD, confirm_password: BENCH_PASSWORD },
    expect: 200,
  })) as { status: string; message: unknown };
  if (body.status !== 'success') throw new Error(`seeding: register ${username}: ${JSON.stringify(body)}`);
}

export async function login(origin: string, email: string): Promise<string> {
  const body = (await call(origin, 'POST', '/api/v1/login/', {
    json: { emailOrUsername: email, password: BENCH_PASSWORD },
    expect: 200,
  })) as { status: string; message: { 'jwt-token'?: string } };
  const token = body.message?.['jwt-token'];
  if (body.status !== 'success' || !token)
    throw new Error(`seeding: login ${email}: ${JSON.stringify(body)}`);
  return token;
}

/** A small plugin the validator accepts. */
function catalogueSource(index: number): string {
  return [
    `DESCRIPTION = "Benchmark catalogue plugin ${index}"`,
    '',
    '',
    'def run(PluginInfo):',
    `    return [line for line in PluginInfo.get("lines", []) if "marker-${index}" in line]`,
    '',
  ].join('\n');
}

/** Runs `task` for 0..count-1 with at most `width` at a time. */
async function inParallel(
  count: number,
  width: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, lane));
}

export async function seed(origin: string, dataSource: DataSource, options: SeedOptions): Promise<Seeded> {
  const people = [
    { username: 'bench_admin', email: ADMIN_EMAIL },
    { username: 'bench_reader', email: 'bench-reader@example.com' },
    { username: 'bench_login', email: 'bench-login@example.com' },
  ];
  for (const person of people) await register(origin, person.username, person.email);
  await dataSource.query(
    'UPDATE users SET is_active = 1, password = ?, password_set_via_otp = 1 WHERE email IN (?, ?, ?)',
    [await hash(BENCH_PASSWORD, options.bcryptCost ?? 12), ...people.map((person) => person.email)],
  );
  const [admin, reader, loginUser] = await Promise.all(
    people.map(async (person) => ({ ...person, token: await login(origin, person.email) })),
  );

  for (let index = 1; index <= options.sessions; index++) {
    await call(origin, 'POST', '/api/v1/sessions/', {
      token: reader.token,
      json: { name: `bench-session-${index}` },
      expect: 201,
    });
  }

  await inParallel(options.approvedPlugins, 4, async (index) => {
    const form = new FormData();
    form.set('name', `bench-catalogue-${index + 1}`);
    form.set(
      'description',
      `Benchmark catalogue plugin ${index + 1}: looks for a marker in the lines a scan collected ` +
        'and reports each line that carries it, so reviewers can see what it matched and why.',
    );
    form.set('group', ['web', 'network', 'auxiliary'][index % 3]);
    form.set('type', ['active', 'passive', 'semi_passive', 'external', 'grep'][index % 5]);
    form.set('author', 'svc-bench');
    form.set(
      'plugin_file',
      new Blob([catalogueSource(index + 1)], { type: 'text/x-python' }),
      `bench_${index}.py`,
    );
    const uploaded = (await call(origin, 'POST', '/api/v1/community-plugins/upload', {
      token: reader.token,
      form,
      expect: 201,
    })) as { data: { id: number } };
    // An admin approves what they read: the source first (it records the read).
    await call(origin, 'GET', `/api/v1/community-plugins/${uploaded.data.id}/source`, {
      token: admin.token,
      expect: 200,
    });
    await call(origin, 'POST', `/api/v1/community-plugins/${uploaded.data.id}/approve`, {
      token: admin.token,
      expect: 200,
    });
  });

  return { admin, reader, loginUser };
}
