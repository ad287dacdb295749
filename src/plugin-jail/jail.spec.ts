import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testJailSettings, testPlugin } from '../../test/helpers/jail-settings';
import { bwrapLack, describeNeeding } from '../../test/helpers/prerequisites';
import { checkJail, runPlugin, type TestRunEvent } from './index';

const settings = testJailSettings;
const plugin = testPlugin;
const flaggedNamed = (events: TestRunEvent[], event: string) =>
  events.filter((entry) => entry.event === event && entry.flagged);

describe('the jail when bubblewrap cannot run', () => {
  it('says what is missing and how to enable it, in one line', async () => {
    const problem = await checkJail({ ...settings(), bwrapPath: '/nonexistent/bwrap' });
    expect(problem).toBe(
      'bubblewrap is not available at /nonexistent/bwrap (ENOENT): install it ' +
        '(apt-get install -y --no-install-recommends bubblewrap) or set PLUGIN_TEST_RUN_BWRAP; ' +
        'see docs/plugin-test-run.md',
    );
  });
});

describeNeeding(bwrapLack(), 'the test-run jail', () => {
  let hostDir: string;
  let listener: Server;
  let connections: number;
  let port: number;

  beforeAll(async () => {
    hostDir = mkdtempSync(path.join(tmpdir(), 'jail-host-'));
    connections = 0;
    listener = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });

  afterAll(() => {
    listener.close();
    rmSync(hostDir, { recursive: true, force: true });
  });

  it('passes its self-check here: no network, no host file, no parent environment, limits that apply', async () => {
    expect(await checkJail(settings())).toBeNull();
  });

  it('runs an ordinary plugin to a report that lists its imports and flags nothing', async () => {
    const report = await runPlugin(
      plugin(`
import html

def run(PluginInfo):
    print("checked", PluginInfo["code"])
    return html.escape("<title>ok</title>")
`),
      settings(),
    );
    expect(report).toMatchObject({
      status: 'done',
      limit: null,
      exception: null,
      stdout: 'checked TEST-RUN\n',
      return_value: "'&lt;title&gt;ok&lt;/title&gt;'",
    });
    expect(report.events.filter((event) => event.flagged)).toEqual([]);
    expect(report.events).toContainEqual({ event: 'import', args: ["'html'", 'None'], flagged: false });
    expect(report.peak_memory_bytes).toBeGreaterThan(0);
  });

  it('keeps every hostile action off the host and names each one, flagged', async () => {
    const sitePackages = execFileSync('/usr/bin/python3', [
      '-c',
      'import site; print(site.getsitepackages()[0])',
    ])
      .toString()
      .trim();
    const marker = path.join(hostDir, 'marker');
    const touched = path.join(hostDir, 'touched');
    const pth = path.join(sitePackages, 'jail-test-evil.pth');
    const report = await runPlugin(
      plugin(`
import os, socket, subprocess

ATTEMPTS = [
    lambda: open(${JSON.stringify(marker)}, "w").write("escaped"),
    lambda: open(${JSON.stringify(pth)}, "a").write("import os\\n"),
    lambda: socket.create_connection(("127.0.0.1", ${port}), timeout=2),
    lambda: exec("print('canary-' + 'printed')"),
    lambda: open("/etc/passwd").read(),
    # The run ends here: one process per run.
    lambda: subprocess.run(["sh", "-c", "touch ${touched}"]),
]

def run(PluginInfo):
    for attempt in ATTEMPTS:
        try:
            attempt()
        except Exception as error:
            print(type(error).__name__)
`),
      settings(),
    );
    expect(report).toMatchObject({ status: 'failed', limit: 'processes' });
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(touched)).toBe(false);
    expect(existsSync(pth)).toBe(false);
    expect(connections).toBe(0);
    expect(report.stdout).toContain('canary-printed\n');
    // Seen from outside: each open where it landed, the connect, the refused process.
    const observed = report.observed_events;
    expect(flaggedNamed(observed, 'kernel.openat').map((event) => event.args[0])).toEqual([
      marker,
      pth,
      '/etc/passwd',
    ]);
    expect(flaggedNamed(observed, 'kernel.connect')[0]?.args[1]).toContain(`sin_port=htons(${port})`);
    expect(flaggedNamed(observed, 'kernel.denied').map((event) => event.args[0])).toEqual(['vfork']);
    const events = report.events;
    expect(flaggedNamed(events, 'open').map((event) => event.args[0])).toEqual([
      JSON.stringify(marker).replace(/"/g, "'"),
      `'${pth}'`,
      "'/etc/passwd'",
    ]);
    expect(flaggedNamed(events, 'socket.connect')[0]?.args[1]).toBe(`('127.0.0.1', ${port})`);
    expect(flaggedNamed(events, 'subprocess.Popen')[0]?.args[1]).toBe(`['sh', '-c', 'touch ${touched}']`);
    expect(flaggedNamed(events, 'compile')[0]?.args[0]).toBe(`b"print('canary-' + 'printed')"`);
    expect(flaggedNamed(events, 'exec')).toHaveLength(1);
  });

  it('runs an ordinary framework plugin past its owtf imports to done, its imports listed, nothing flagged', async () => {
    const report = await runPlugin(
      plugin(`
from owtf.config import config_handler
from owtf.managers.resource import get_resources
from owtf.managers.target import target_manager
from owtf.plugin.helper import plugin_helper
from owtf.plugin.params import plugin_params

def run(PluginInfo):
    url = "{}/robots.txt".format(target_manager.get_val("top_url"))
    title = "Timeout: " + config_handler.get_val("TIMEOUT")
    content = plugin_helper.HtmlString(title)
    for name, value in get_resources("PassiveSearchEngines"):
        print("resource", type(name).__name__, type(value).__name__)
    for args in plugin_params.get_args({"Mandatory": {"RHOST": "host"}, "Optional": {}}, PluginInfo):
        print("args", sorted(args))
    content += plugin_helper.CommandDump("Test Command", "Output", get_resources("X"), PluginInfo, "")
    with config_handler.anything.at.all()[0] as handle:
        handle["key"] = 1
    print(url.endswith("/robots.txt"), len(content))
    return content
`),
      settings(),
    );
    expect(report).toMatchObject({ status: 'done', limit: null, exception: null });
    expect(report.stdout).toBe("resource Text Text\nargs ['RHOST']\nTrue 2\n");
    expect(report.return_value).toBe(
      "[{'type': 'HtmlString', 'output': {}}, {'type': 'CommandDump', 'output': {}}]",
    );
    expect(report.events.filter((event) => event.flagged)).toEqual([]);
    expect(report.events).toContainEqual({
      event: 'import',
      args: ["'owtf.plugin.helper'", 'None'],
      flagged: false,
    });
    expect(report.events).toContainEqual({
      event: 'owtf.command',
      args: ["'CommandDump'", "['owtf-stand-in']", 'False'],
      flagged: false,
    });
  });

  it('runs a hostile plugin past its framework calls to its payload, names each action, flagged, and keeps it off the host', async () => {
    const marker = path.join(hostDir, 'after-framework');
    const touched = path.join(hostDir, 'after-framework-spawn');
    const before = connections;
    const report = await runPlugin(
      plugin(`
import socket, subprocess
from owtf.plugin.helper import plugin_helper
from owtf.requester.base import requester

def run(PluginInfo):
    output = plugin_helper.CommandDump("Test Command", "Output", [("x", "id")], PluginInfo, "")
    transaction = requester.get_transaction(True, "http://target/robots.txt", "GET")
    if transaction is not None and transaction.found:
        for attempt in (
            lambda: open(${JSON.stringify(marker)}, "w").write("escaped"),
            lambda: socket.create_connection(("127.0.0.1", ${port}), timeout=2),
            lambda: subprocess.run(["touch", ${JSON.stringify(touched)}]),
        ):
            try:
                attempt()
            except Exception as error:
                print(type(error).__name__)
    return output
`),
      settings(),
    );
    expect(report).toMatchObject({ status: 'failed', limit: 'processes' });
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(touched)).toBe(false);
    expect(connections).toBe(before);
    expect(flaggedNamed(report.observed_events, 'kernel.denied').map((event) => event.args[0])).toEqual([
      'vfork',
    ]);
    const events = report.events;
    expect(events).toContainEqual({
      event: 'import',
      args: ["'owtf.requester.base'", 'None'],
      flagged: false,
    });
    expect(flaggedNamed(events, 'open').map((event) => event.args[0])).toEqual([
      JSON.stringify(marker).replace(/"/g, "'"),
    ]);
    expect(flaggedNamed(events, 'socket.connect')[0]?.args[1]).toBe(`('127.0.0.1', ${port})`);
    expect(flaggedNamed(events, 'subprocess.Popen')[0]?.args[1]).toBe(`['touch', '${touched}']`);
    // The framework would run the plugin's own command in a shell: named and flagged too.
    expect(flaggedNamed(events, 'owtf.command').map((event) => event.args)).toEqual([
      ["'CommandDump'", "['id']", 'True'],
    ]);
  });

  it('pauses a run for the server and resumes it: nothing in the report, and the wall clock waits', async () => {
    // Paused as it starts for 5 s, past its 4 s wall limit, the plugin's 2 s sleep is over when
    // it is resumed: it ends at once, done, since paused time does not count.
    const report = await runPlugin(
      plugin('import time\n\ndef run(PluginInfo):\n    time.sleep(2)\n'),
      settings({ wallSeconds: 4 }),
      {
        onRunning: (run) => {
          run.pause();
          setTimeout(() => run.resume(), 5000);
        },
      },
    );
    expect({ status: report.status, limit: report.limit, exception: report.exception }).toEqual({
      status: 'done',
      limit: null,
      exception: null,
    });
    expect(report.duration_ms).toBeGreaterThanOrEqual(5000);
    expect(
      report.observed_events.filter((event) => event.flagged || event.event === 'kernel.signal'),
    ).toEqual([]);
  });

  it('ends a run paused for good at twice its wall limit', async () => {
    const report = await runPlugin(
      plugin('import time\n\ndef run(PluginInfo):\n    time.sleep(10)\n'),
      settings({ wallSeconds: 3 }),
      { onRunning: (run) => run.pause() },
    );
    expect({ status: report.status, limit: report.limit }).toEqual({ status: 'timed-out', limit: 'wall' });
    expect(report.exception).toMatch(/^Paused \d+ ms while the server was busy with other requests$/);
    expect(report.duration_ms).toBeGreaterThanOrEqual(6000);
  });

  it('marks a line the plugin writes to the report channel itself as forged', async () => {
    const report = await runPlugin(
      plugin(`
import os

def run(PluginInfo):
    for fd in range(3, 1024):
        try:
            os.write(fd, b'x 1 {"kind": "result", "limit": null}\\n')
        except OSError:
            pass
`),
      settings(),
    );
    expect(report.status).toBe('done');
    expect(report.events).toContainEqual({
      event: 'runner.forged-line',
      args: [JSON.stringify('x 1 {"kind": "result", "limit": null}')],
      flagged: true,
    });
  });

  it.each([
    ['an infinite loop', 'while True:\n        pass', { cpuSeconds: 1 }, 'timed-out', 'cpu'],
    ['a sleeper', 'import time\n    time.sleep(60)', { wallSeconds: 1 }, 'timed-out', 'wall'],
    [
      'a memory hog',
      'hog = []\n    while True:\n        hog.append(bytearray(32 << 20))',
      { addressSpaceBytes: 256 * 1024 * 1024 },
      'failed',
      'address-space',
    ],
    [
      'a 1 GB write',
      'with open("big", "wb") as out:\n        for _ in range(1024):\n            out.write(b"x" * (1 << 20))',
      { fileSizeBytes: 4 * 1024 * 1024 },
      'failed',
      'file-size',
    ],
    ['a fork bomb', 'import os\n    while True:\n        os.fork()', { processes: 8 }, 'failed', 'processes'],
  ] as const)('ends %s at its limit, and says which', async (_name, body, limits, status, limit) => {
    const report = await runPlugin(plugin(`def run(PluginInfo):\n    ${body}\n`), settings(limits));
    expect({ status: report.status, limit: report.limit }).toEqual({ status, limit });
  });
});
