import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, posix, relative } from 'node:path';
import { freePort, waitUntilReady } from './helpers/api-process';
import { describeNeeding } from './helpers/prerequisites';
import { TEST_JWT_SECRET } from './helpers/test-app';

const ROOT = join(__dirname, '..');

interface Instruction {
  keyword: string;
  args: string;
}

/** Where a stage's WORKDIR is laid out here. */
interface StageRoot {
  root: string;
  workdir: string;
}

interface Stage {
  name: string | null;
  workdir: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages: its instructions, line continuations joined and comments dropped. */
function dockerfileStages(text: string): Stage[] {
  const stages: Stage[] = [];
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s+(.*)$/.exec(line)!;
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      stages.push({ name: /\sAS\s+(\S+)$/i.exec(args)?.[1] ?? null, workdir: '/', instructions: [] });
      continue;
    }
    const stage = stages.at(-1)!;
    if (upper === 'WORKDIR') stage.workdir = posix.resolve(stage.workdir, args);
    stage.instructions.push({ keyword: upper, args });
  }
  return stages;
}

/** .dockerignore's entries; only plain paths from the context's root, as this file has them. */
function dockerignored(): (path: string) => boolean {
  const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  for (const pattern of patterns) {
    // A wildcard or exception would need Docker's matcher: this test says so rather than guess.
    if (/[*?[\]!]/.test(pattern)) throw new Error(`.dockerignore pattern this test cannot read: ${pattern}`);
  }
  return (path) => patterns.some((pattern) => path === pattern || path.startsWith(`${pattern}/`));
}

/**
 * One COPY, as Docker does it: from the build context (what .dockerignore leaves) or from an
 * earlier stage's directory, to a path under the stage's WORKDIR, which is `root` here.
 */
function copy(args: string, stage: Stage, root: string, stageRoots: Map<string, StageRoot>): void {
  const words = args.split(/\s+/);
  const from = words[0].startsWith('--from=') ? words.shift()!.slice('--from='.length) : null;
  const destination = words.pop()!;
  const target = join(root, relative(stage.workdir, posix.resolve(stage.workdir, destination)));
  const ignored = dockerignored();
  for (const source of words) {
    // A path in an earlier stage is one of that stage's file system: under its WORKDIR here.
    const stageRoot = from === null ? null : stageRoots.get(from)!;
    const origin =
      stageRoot === null
        ? join(ROOT, source)
        : join(stageRoot.root, relative(stageRoot.workdir, posix.resolve(stageRoot.workdir, source)));
    if (from === null && ignored(posix.normalize(source)))
      throw new Error(`COPY ${source}: .dockerignore leaves it out`);
    if (!existsSync(origin))
      throw new Error(`COPY ${source}: no such file in ${from ?? 'the build context'}`);
    const into =
      statSync(origin).isDirectory() || (!destination.endsWith('/') && words.length === 1)
        ? target
        : join(target, basename(source));
    cpSync(origin, into, {
      recursive: true,
      filter: (path) => from !== null || !ignored(relative(ROOT, path)),
    });
  }
}

/** A RUN that installs the base image's system packages (apt-get): not run here, see below. */
const installsSystemPackages = (command: string) => /^apt-get\b/.test(command);

function runIn(dir: string, command: string): void {
  const result = spawnSync('sh', ['-c', command], {
    cwd: dir,
    encoding: 'utf8',
    // CI's own `npm ci` has just filled npm's cache: the image's install takes the same
    // tarballs from there rather than from the network (the tests talk to loopback only).
    env: { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_prefer_offline: 'true' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`RUN ${command} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  }
}

const composeCommand = (): string[] | null => {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0)
    return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  return null;
};
const compose = composeCommand();
const composeLack =
  compose === null
    ? {
        missing: 'docker compose or docker-compose',
        remedy: 'apt-get install -y --no-install-recommends docker-compose',
      }
    : null;

/**
 * The image's build without a Docker engine: exactly the files the Dockerfile's COPY lines
 * name are laid out in empty directories, one per stage, the build stage's RUN commands run
 * there, and the app starts from the runtime stage's files alone (nothing above its temporary
 * directory holds a node_modules), on the database under test.
 *
 * Not done here: the RUN lines that install the base image's system packages with apt-get
 * (python3, make and g++ to build; python3, bubblewrap and strace to run), which the machine
 * running the tests has, and the runtime stage's RUN that makes its data directory the `node`
 * user's (the app makes the directory it needs).
 *
 * The build is a whole `npm ci` and `tsc` (minutes), and what it proves is the image's file
 * set, not a database: it runs once, in the SQLite run, and is skipped (its name says so) where
 * TEST_DATABASE_URL is set.
 */
const onSqliteRun = process.env.TEST_DATABASE_URL ? describe.skip : describe;

describe('the Docker image, built from its COPY lines', () => {
  const stages = dockerfileStages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));

  onSqliteRun('built and started (run where TEST_DATABASE_URL is unset: the build is minutes)', () => {
    it('builds in a directory holding only what the build stage copies, and the runtime stage starts and answers', async () => {
      expect(stages.map((stage) => stage.name)).toEqual(['build', null]);
      const [build, runtime] = stages;
      const stageRoots = new Map<string, StageRoot>();

      const buildRoot = mkdtempSync(join(tmpdir(), 'svc-image-build-'));
      stageRoots.set('build', { root: buildRoot, workdir: build.workdir });
      for (const { keyword, args } of build.instructions) {
        if (keyword === 'COPY') copy(args, build, buildRoot, stageRoots);
        if (keyword === 'RUN' && !installsSystemPackages(args)) runIn(buildRoot, args);
      }
      // `npm prune --omit=dev` ran: what is copied on holds production dependencies only.
      expect(existsSync(join(buildRoot, 'node_modules', 'jest'))).toBe(false);

      const runtimeRoot = mkdtempSync(join(tmpdir(), 'svc-image-runtime-'));
      const env: Record<string, string> = {};
      let command: string[] = [];
      for (const { keyword, args } of runtime.instructions) {
        if (keyword === 'COPY') copy(args, runtime, runtimeRoot, stageRoots);
        if (keyword === 'ENV') {
          for (const pair of args.split(/\s+/)) {
            const [name, ...value] = pair.split('=');
            env[name] = value.join('=');
          }
        }
        if (keyword === 'CMD') command = JSON.parse(args) as string[];
      }
      expect(env).toMatchObject({ NODE_ENV: 'production' });
      expect(command[0]).toBe('node');

      // What the image is given at `docker run`: the secrets production requires. Here on
      // loopback and a free port instead of the image's 0.0.0.0:8009, on its default SQLite.
      const port = await freePort();
      const manifestKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
      const child = spawn(command[0], command.slice(1), {
        cwd: runtimeRoot,
        env: {
          PATH: process.env.PATH,
          ...env,
          HOST: '127.0.0.1',
          PORT: String(port),
          JWT_SECRET: TEST_JWT_SECRET,
          PLUGIN_MANIFEST_KEY: manifestKey.toString(),
          BCRYPT_COST: '4',
          RATE_LIMIT: 'off',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      try {
        await waitUntilReady(port, child);
        const api = `http://127.0.0.1:${port}/api/v1`;
        const form = (fields: Record<string, string>) => ({
          method: 'POST',
          body: new URLSearchParams(fields),
        });
        const registered = await fetch(
          `${api}/register/`,
          form({
            username: 'imaged',
            email: 'imaged@example.com',
            password: 'Str0ng!Pass',
            confirm_password: 'Str0ng!Pass',
          }),
        );
        expect(await registered.json()).toMatchObject({
          status: 'success',
          message: 'User created successfully',
        });
        await fetch(`${api}/generate/confirm_email/`, form({ email: 'imaged@example.com' }));
        // No SMTP_HOST: the mail is printed on stdout.
        for (let i = 0; i < 200 && !/email-verify\/[0-9a-f-]{36}/.test(output); i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const key = /email-verify\/([0-9a-f-]{36})/.exec(output)![1];
        expect(await (await fetch(`${api}/verify/confirm_email/${key}`)).json()).toMatchObject({
          message: 'Email Verified',
        });
        const login = (await (
          await fetch(`${api}/login/`, form({ emailOrUsername: 'imaged', password: 'Str0ng!Pass' }))
        ).json()) as { message: { 'jwt-token': string } };
        // An upload is judged by the Python analyser `npm run build` copied into dist/.
        const upload = new FormData();
        upload.append(
          'plugin_file',
          new Blob(['DESCRIPTION = "Says hello"\n\n\ndef run(PluginInfo):\n    return []\n']),
          'hello.py',
        );
        for (const [name, value] of Object.entries({
          name: 'hello',
          description: 'Says hello',
          group: 'web',
          type: 'passive',
          author: 'imaged',
        })) {
          upload.append(name, value);
        }
        const uploaded = await fetch(`${api}/community-plugins/upload`, {
          method: 'POST',
          headers: { authorization: `Bearer ${login.message['jwt-token']}` },
          body: upload,
        });
        expect({ status: uploaded.status, body: await uploaded.json() }).toMatchObject({
          status: 201,
          body: { status: 'success', data: { name: 'hello', status: 'pending' } },
        });
      } catch (error) {
        (error as Error).message += `\n\nthe image's app wrote:\n${output.slice(-4000)}`;
        throw error;
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    }, 900_000);
  });

  describeNeeding(composeLack, 'docker-compose.yml', () => {
    it('is a valid Compose file, with and without the cluster profile, once the secrets are given', () => {
      // An empty env file: a developer's .env beside docker-compose.yml does not answer for the test.
      const envFile = join(mkdtempSync(join(tmpdir(), 'svc-compose-')), 'empty.env');
      writeFileSync(envFile, '');
      const [executable, ...prefix] = [...compose!, '--env-file', envFile];
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        JWT_SECRET: 'x',
        PLUGIN_MANIFEST_KEY: 'y',
      };
      for (const profile of [[], ['--profile', 'cluster']]) {
        const checked = spawnSync(executable, [...prefix, ...profile, 'config', '--quiet'], {
          cwd: ROOT,
          env,
          encoding: 'utf8',
        });
        expect({ profile, status: checked.status, stderr: checked.stderr }).toEqual({
          profile,
          status: 0,
          stderr: '',
        });
      }
      // Without them, Compose stops naming the one missing (docs/operations.md#docker).
      const bare = spawnSync(executable, [...prefix, 'config', '--quiet'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        encoding: 'utf8',
      });
      expect(bare.status).not.toBe(0);
      expect(bare.stderr).toContain('set JWT_SECRET (sh deploy/compose-env.sh writes it to .env)');
    });
  });
});
