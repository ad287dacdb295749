import { connect } from 'node:net';
import { getJson, post, spawnApiProcess, waitUntilReady } from './helpers/api-process';
import type { ObservedApiProcess } from './helpers/api-process';
import { emptyDatabase, testDatabaseUrl } from './helpers/database';
import { okMessage } from './helpers/envelopes';

const IN_FLIGHT = 60;
const PASSWORD = 'Str0ng!Pass';

/** Occurrences of `pattern` (global) in `text`. */
const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

/**
 * The real entrypoint as a process: SIGTERM lets every request it has received finish (the
 * bcrypt work in the worker pool and the token written after it included), refuses new
 * connections, and exits 0. The test knows the logins were received from the server's own
 * debug line per request, and that the signal was handled from its log line, so nothing
 * here depends on how fast the machine is.
 */
describe('graceful shutdown', () => {
  let api: ObservedApiProcess | undefined;
  afterEach(() => {
    if (api && api.child.exitCode === null) api.child.kill('SIGKILL');
  });

  it(`finishes ${IN_FLIGHT} logins in flight, refuses new connections and exits 0`, async () => {
    const databaseUrl = testDatabaseUrl();
    await emptyDatabase(databaseUrl);
    api = await spawnApiProcess({
      DATABASE_URL: databaseUrl,
      // Slow enough hashing that most logins are still queued for the pool at the signal.
      BCRYPT_COST: '11',
      RATE_LIMIT: 'off',
      LOG_LEVEL: 'debug',
      // The grace is a safety bound, not what is tested: it must not decide the outcome here.
      SHUTDOWN_GRACE_SECONDS: '600',
    });
    const { port } = api;
    await waitUntilReady(port, api.child);

    // An ordinary account: registered and activated through the mailed link (which keeps its
    // password), so logins succeed and each one writes its token after the hash.
    const register = await post(port, '/api/v1/register/', {
      username: 'leaving',
      email: 'leaving@example.com',
      password: PASSWORD,
      confirm_password: PASSWORD,
    });
    expect(register.body).toEqual(okMessage('User created successfully'));
    await post(port, '/api/v1/generate/confirm_email/', { email: 'leaving@example.com' });
    await api.waitForOutput(/email-verify\/[0-9a-f-]{36}/);
    const key = /email-verify\/([0-9a-f-]{36})/.exec(api.stdout())![1];
    const verified = await getJson(port, `/api/v1/verify/confirm_email/${key}`);
    expect(verified.body).toEqual(okMessage('Email Verified'));

    const received = (stdout: string) => count(stdout, /Request received: POST \/api\/v1\/login\//g);
    const receivedBefore = received(api.stdout());
    const logins = Array.from({ length: IN_FLIGHT }, () =>
      post(port, '/api/v1/login/', { emailOrUsername: 'leaving', password: PASSWORD }),
    );
    // Every login has reached the server: it logged each one as received.
    await api.waitForOutput((stdout) => received(stdout) - receivedBefore >= IN_FLIGHT);
    api.child.kill('SIGTERM');
    await api.waitForOutput(/SIGTERM received: new connections are refused; \d+ requests in flight/);
    const inFlightAtSignal = Number(
      /SIGTERM received: [^;]*; (\d+) requests in flight/.exec(api.stdout())![1],
    );

    // From the moment it said so, nothing new is taken.
    await expect(post(port, '/api/v1/login/', { emailOrUsername: 'x', password: 'y' })).rejects.toThrow(
      /ECONNREFUSED/,
    );

    const answers = await Promise.all(logins);
    for (const { status, body } of answers) {
      expect(status).toBe(200);
      expect(body).toMatchObject({ status: 'success', message: { 'jwt-token': expect.any(String) } });
    }
    const code = await api.exited;
    if (code !== 0) throw new Error(`exited with ${code}; its log ends:\n${api.stdout().slice(-3000)}`);
    // The figure to report: how many were still in flight when the signal came (all answered).
    process.stdout.write(
      `graceful shutdown: ${inFlightAtSignal} of ${IN_FLIGHT} logins in flight at SIGTERM; ${answers.length} of ${IN_FLIGHT} answered 200\n`,
    );
  }, 660_000);

  it('with SHUTDOWN_DRAIN_SECONDS, answers readiness 503 and keeps serving for the drain, then exits 0', async () => {
    const databaseUrl = testDatabaseUrl();
    await emptyDatabase(databaseUrl);
    // Long enough that the checks below run inside it on any machine; the test waits it out.
    api = await spawnApiProcess({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_SECONDS: '8',
    });
    const { port } = api;
    await waitUntilReady(port, api.child);
    api.child.kill('SIGTERM');
    await api.waitForOutput(/SIGTERM received: readiness down, serving 8000 ms more/);

    // The balancer's check fails, naming the shutdown; requests it still sends are served.
    const ready = await getJson(port, '/api/v1/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({
      status: 'fail',
      message: 'Service unavailable',
      errors: { shutdown: 'down', startup: 'up', database: 'up', migrations: 'up', plugin_directory: 'up' },
    });
    expect((await getJson(port, '/api/v1/health')).status).toBe(200);
    expect(api.stdout()).not.toMatch(/new connections are refused/);

    const code = await api.exited;
    expect(code).toBe(0);
    expect(api.stdout()).toMatch(/SIGTERM received: new connections are refused/);
  }, 60_000);

  it('logs a second stop signal while stopping, and exits 1 at the third without waiting', async () => {
    const databaseUrl = testDatabaseUrl();
    await emptyDatabase(databaseUrl);
    api = await spawnApiProcess({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'debug',
      SHUTDOWN_GRACE_SECONDS: '60',
    });
    const { port } = api;
    await waitUntilReady(port, api.child);
    // A request whose body never comes: in flight until its 60 s request timeout, so the
    // stop is still waiting for it when the later signals come.
    const held = connect(port, '127.0.0.1');
    held.on('error', () => undefined);
    held.write(
      'POST /api/v1/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
    await api.waitForOutput(/Request received: POST \/api\/v1\/login\//);
    // Each signal once the one before it was handled (two sent together may arrive as one).
    api.child.kill('SIGINT');
    await api.waitForOutput(
      /SIGINT received: new connections are refused; 1 requests in flight get up to 60000 ms/,
    );
    api.child.kill('SIGTERM');
    await api.waitForOutput(/SIGTERM received again: already stopping \(2 of 3: the last exits at once\)/);
    api.child.kill('SIGINT');
    expect(await api.exited).toBe(1);
    expect(api.stdout()).toContain(
      'SIGINT received again (3 of 3): exiting now, without waiting for requests in flight',
    );
    expect(api.stdout()).not.toContain('Shut down');
    held.destroy();
  }, 60_000);
});
