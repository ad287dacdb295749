// The suite's Redis when SVC_TEST_REDIS_URL names none: a redis-server of the run's own on a
// free loopback port, keeping nothing on disk, stopped by the global teardown. So `npm test`
// never empties a database of the developer's Redis on 6379. Started by Jest's global setup;
// the workers inherit SVC_TEST_REDIS_URL pointing at it.
const { spawn, spawnSync } = require('node:child_process');
const { createConnection } = require('node:net');

/** Below the range the system hands out for port 0, as test/helpers/api-process.ts picks. */
const PORTS = { from: 20_000, to: 32_000 };

function answersPing(port) {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      resolve(String(data).startsWith('+PONG'));
    });
  });
}

const onPath = () => spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

/** Until it answers (true) or has exited (false: its port was taken, say). */
async function started(server, port) {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (server.exitCode !== null || server.signalCode !== null) return false;
    if (await answersPing(port)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** The server started, or null when redis-server is not installed (its tests then say so). */
async function startPrivateRedis() {
  if (!onPath()) return null;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const port = PORTS.from + Math.floor(Math.random() * (PORTS.to - PORTS.from));
    const server = spawn(
      'redis-server',
      [
        '--bind',
        '127.0.0.1',
        '--port',
        String(port),
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        process.env.TMPDIR,
      ],
      { stdio: 'ignore' },
    );
    if (await started(server, port)) return { server, url: `redis://127.0.0.1:${port}/15` };
    server.kill('SIGKILL');
  }
  throw new Error('could not start a private redis-server for the tests on a free loopback port');
}

function stopPrivateRedis(server) {
  if (server.exitCode !== null || server.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  return exited;
}

module.exports = { startPrivateRedis, stopPrivateRedis };
