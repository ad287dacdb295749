import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/app-config';
import { freePort, spawnApiProcess, waitUntilReady } from './helpers/api-process';
import type { ObservedApiProcess } from './helpers/api-process';
import { emptyDatabase } from './helpers/database';

const mysqlUrl = process.env.TEST_DATABASE_URL?.startsWith('mysql')
  ? process.env.TEST_DATABASE_URL
  : undefined;
const onMysql = mysqlUrl ? it : it.skip;

/** The server named in TEST_DATABASE_URL, as parts. */
function mysqlServer() {
  const database = loadConfig({ DATABASE_URL: mysqlUrl, JWT_SECRET: 'x'.repeat(32) }).database;
  if (database.type !== 'mysql') throw new Error('TEST_DATABASE_URL is not a MySQL URL');
  return database;
}

const userinfo = (user: string, password: string) =>
  `${encodeURIComponent(user)}${password ? `:${encodeURIComponent(password)}` : ''}`;

function status(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', reject);
  });
}

/**
 * The real entrypoint as a process. Before the app is built it waits for the database,
 * one log line per try, and if the database never comes it exits 1 with one line on
 * stderr naming the cause, without a stack trace.
 */
describe('start-up against a database that is not there', () => {
  let api: ObservedApiProcess | undefined;
  afterEach(() => {
    if (api && api.child.exitCode === null) api.child.kill('SIGKILL');
    api = undefined;
  });

  /**
   * Starts it with a short wait, and expects exit 1 with one line matching `cause`; `tries`
   * 'none' for an error no try can change (no retry, no "gave up after").
   */
  async function expectGivesUp(
    env: Record<string, string>,
    cause: RegExp,
    tries: 'tries' | 'try' | 'none' = 'tries',
  ): Promise<void> {
    api = await spawnApiProcess({ LOG_LEVEL: 'warn', ...env });
    expect(await api.exited).toBe(1);
    const lines = api.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc-api failed to start: /);
    expect(lines[0]).toMatch(cause);
    if (tries === 'none') expect(lines[0]).not.toMatch(/gave up/);
    else expect(lines[0]).toMatch(new RegExp(`\\(gave up after \\d+ ${tries} in \\d+(\\.\\d)? s\\)$`));
    // Every try that was not the last says so, in one JSON log line; no stack anywhere.
    const retries = api
      .stdout()
      .trimEnd()
      .split('\n')
      .filter((line) => line !== '');
    if (tries === 'tries') expect(retries.length).toBeGreaterThan(0);
    if (tries === 'none') expect(retries).toEqual([]);
    for (const line of retries) {
      const entry = JSON.parse(line) as { msg: string; context: string };
      expect(entry.context).toBe('Database');
      expect(entry.msg).toMatch(/^Database not ready \(try \d+\): .*; next try in \d+(\.\d)? s$/);
      expect(entry.msg).toMatch(cause);
    }
    expect(api.stdout() + api.stderr()).not.toMatch(/\n\s+at /);
  }

  it('a closed port: retries, then one line saying the connection was refused', async () => {
    const closed = await freePort();
    await expectGivesUp(
      { DATABASE_URL: `mysql://svc@127.0.0.1:${closed}/svc`, DATABASE_STARTUP_WAIT_SECONDS: '2' },
      new RegExp(
        `Connection refused by 127\\.0\\.0\\.1:${closed}: is the database server running on that port\\?`,
      ),
    );
  }, 30_000);

  it('an SQLite path under a file: one line saying the path is unusable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
    writeFileSync(join(dir, 'not-a-directory'), '');
    const path = join(dir, 'not-a-directory', 'svc.sqlite');
    await expectGivesUp(
      { DATABASE_URL: `sqlite:${path}`, DATABASE_STARTUP_WAIT_SECONDS: '0' },
      /SQLite database path \S+\/not-a-directory\/svc\.sqlite is unusable: a part of the path is a file, not a directory/,
      'try',
    );
  }, 30_000);

  it('an SQLite path that is a directory: one line saying the file cannot be opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
    await expectGivesUp(
      { DATABASE_URL: `sqlite:${dir}`, DATABASE_STARTUP_WAIT_SECONDS: '1' },
      /SQLite database path \S+ is unusable: the file cannot be opened or created/,
    );
  }, 30_000);

  onMysql(
    'an unknown database: at once, without retrying, one line naming it and how to create it',
    async () => {
      const server = mysqlServer();
      await expectGivesUp(
        {
          DATABASE_URL: `mysql://${userinfo(server.username, server.password)}@${server.host}:${server.port}/svc_no_such_database`,
          // Long: the start must not wait it out.
          DATABASE_STARTUP_WAIT_SECONDS: '600',
        },
        /Database "svc_no_such_database" does not exist on \S+; create it with CREATE DATABASE `svc_no_such_database` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci$/,
        'none',
      );
    },
    30_000,
  );

  onMysql(
    'a user the server does not know: at once, without retrying, one line saying access was denied',
    async () => {
      const server = mysqlServer();
      await expectGivesUp(
        {
          DATABASE_URL: `mysql://svc_no_such_user:wrong@${server.host}:${server.port}/${server.database}`,
          DATABASE_STARTUP_WAIT_SECONDS: '600',
        },
        /Access denied for user "svc_no_such_user" on \S+: check the user and password in DATABASE_URL$/,
        'none',
      );
    },
    30_000,
  );
});

describe('start-up waits for a database that comes up later', () => {
  let api: ObservedApiProcess | undefined;
  let proxy: Server | undefined;
  const sockets = new Set<Socket>();
  afterEach(async () => {
    if (api && api.child.exitCode === null) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    api = undefined;
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    proxy = undefined;
  });

  /** Starts the app, waits for its first failed try (its own log line), makes the database appear, and expects it to serve. */
  async function comesUpLater(databaseUrl: string, notReady: RegExp, appear: () => Promise<void>) {
    api = await spawnApiProcess({
      DATABASE_URL: databaseUrl,
      DATABASE_STARTUP_WAIT_SECONDS: '60',
      LOG_LEVEL: 'warn',
    });
    await api.waitForOutput(notReady);
    await appear();
    await waitUntilReady(api.port, api.child);
    expect(await status(api.port, '/api/v1/health/ready')).toBe(200);
    expect(api.stderr()).toBe('');
  }

  (mysqlUrl ? it : it.skip)(
    'MariaDB behind a port that opens after the first try',
    async () => {
      await emptyDatabase(mysqlUrl!);
      const server = mysqlServer();
      const port = await freePort();
      await comesUpLater(
        `mysql://${userinfo(server.username, server.password)}@127.0.0.1:${port}/${server.database}`,
        /Database not ready \(try 1\): Connection refused/,
        // A TCP proxy to the real server: from the app's side, the database has come up.
        () =>
          new Promise<void>((resolve, reject) => {
            proxy = createServer((client) => {
              const upstream = createConnection(server.port, server.host);
              for (const socket of [client, upstream]) {
                sockets.add(socket);
                socket.on('error', () => undefined);
                socket.on('close', () => sockets.delete(socket));
              }
              client.pipe(upstream).pipe(client);
            });
            proxy.once('error', reject);
            proxy.listen(port, '127.0.0.1', () => resolve());
          }),
      );
    },
    60_000,
  );

  (mysqlUrl ? it.skip : it)(
    'SQLite in a directory that becomes usable after the first try',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
      const blocked = join(dir, 'volume');
      writeFileSync(blocked, '');
      await comesUpLater(
        `sqlite:${join(blocked, 'svc.sqlite')}`,
        /Database not ready \(try 1\): SQLite database path/,
        async () => {
          rmSync(blocked);
          mkdirSync(blocked);
        },
      );
    },
    60_000,
  );
});

describe('start-up settings', () => {
  let api: ObservedApiProcess | undefined;
  afterEach(async () => {
    if (api && api.child.exitCode === null) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    api = undefined;
  });

  const sqliteUrl = () => `sqlite:${join(mkdtempSync(join(tmpdir(), 'svc-settings-')), 'svc.sqlite')}`;

  it('names every bad setting in one line, and starts nothing', async () => {
    api = await spawnApiProcess({
      DATABASE_URL: sqliteUrl(),
      PORT: 'eighty',
      LOG_FORMAT: 'xml',
      REDIS_URL: 'http://cache',
    });
    expect(await api.exited).toBe(1);
    expect(api.stderr()).toBe(
      'Invalid environment: PORT must be an integer from 0 to 65535; REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0; LOG_FORMAT must be one of json, pretty\n',
    );
  });

  it('reads .env in the working directory; the environment wins over it; a line it cannot use is named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-dotenv-'));
    const port = await freePort();
    const database = join(dir, 'from-dotenv.sqlite');
    writeFileSync(
      join(dir, '.env'),
      `# a developer's settings\nPORT=${port}\nexport DATABASE_URL="sqlite:${database}"\nLOG_LEVEL=silent\nJWT_SECRET\n`,
    );
    // PORT and LOG_LEVEL come from the environment as well: theirs are the ones used.
    api = await spawnApiProcess({ LOG_LEVEL: 'info' }, { cwd: dir });
    await api.waitForOutput(/Start-up work done/);
    expect(api.stdout()).toContain(`svc-api listening on http://127.0.0.1:${api.port} (SQLite ${database})`);
    expect(api.port).not.toBe(port);
    expect(await status(api.port, '/api/v1/health/ready')).toBe(200);
    // A line it cannot use is named at start-up, not dropped without a word.
    expect(api.stderr()).toBe('Warning: .env ignored: line 5 has no "=" (NAME=value expected)\n');
  });

  it('LOG_FORMAT=pretty: readable lines, requests included, secrets still redacted', async () => {
    api = await spawnApiProcess({ DATABASE_URL: sqliteUrl(), LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' });
    await api.waitForOutput(/svc-api listening on/);
    expect(await status(api.port, '/api/v1/health?token=s3cret')).toBe(200);
    await api.waitForOutput(/GET \/api\/v1\/health/);
    const lines = api.stdout().trimEnd().split('\n');
    expect(lines.find((line) => line.includes('listening'))).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}\[Main\] svc-api listening on http:\/\/127\.0\.0\.1:\d+ \(SQLite \S+\) after \d+ ms$/,
    );
    expect(lines.find((line) => line.includes('GET'))).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}GET \/api\/v1\/health\?token=\[Redacted\] 200 \d+ ms \(\S+\)$/,
    );
    expect(api.stdout()).not.toContain('s3cret');
    expect(api.stdout()).not.toMatch(/^\{/m);
  });
});
