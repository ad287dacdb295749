import { readdirSync } from 'node:fs';
import { CHANNEL_FLOOD, lyingPlugins, showsExpected } from '../../test/helpers/lying-plugins';
import { testJailSettings, testPlugin } from '../../test/helpers/jail-settings';
import { bwrapLack, describeNeeding } from '../../test/helpers/prerequisites';
import { runPlugin, type TestRunEvent, type TestRunReport } from './index';

/**
 * Each way a plugin made the old, in-process report lie, run through the jail: whatever it does
 * to the runner, the action is in the report's observed_events (the tracer's view from outside),
 * flagged, and the run never ends a clean `done` with nothing flagged.
 */

const settings = testJailSettings;
const plugin = testPlugin;
const observedFlagged = (report: TestRunReport, event: string): TestRunEvent[] =>
  report.observed_events.filter((entry) => entry.event === event && entry.flagged);

describeNeeding(bwrapLack(), 'the report seen from outside the plugin', () => {
  it.each(lyingPlugins().map((lying) => [lying.name, lying] as const))(
    '%s: the action is seen from outside and flagged, whatever it did to the runner',
    async (_name, lying) => {
      const report = await runPlugin(lying.source, settings());
      expect(showsExpected(report.observed_events, lying.expect)).toBe(true);
    },
  );

  it('_posixsubprocess.fork_exec, which CPython does not audit, ends the run and is missing from the testimony', async () => {
    const report = await runPlugin(
      lyingPlugins().find((lying) => lying.name === 'fork_exec.py')!.source,
      settings(),
    );
    expect(report).toMatchObject({ status: 'failed', limit: 'processes' });
    expect(observedFlagged(report, 'server.testimony-missing').map((event) => event.args[0])).toContain(
      'kernel.denied',
    );
  });

  it('a seccomp filter of the plugin’s own, which could outrank the tracer’s, is refused: prctl or seccomp', async () => {
    for (const call of ['libc.prctl(22, 2, 0, 0, 0)', 'libc.syscall(317, 1, 0, 0)']) {
      const report = await runPlugin(
        plugin(`
import ctypes

def run(PluginInfo):
    libc = ctypes.CDLL(None)
    return ${call}
`),
        settings(),
      );
      expect({ status: report.status, limit: report.limit }).toEqual({ status: 'failed', limit: null });
      expect(observedFlagged(report, 'kernel.denied').map((event) => event.args[0])).toEqual([
        call.includes('prctl') ? 'prctl' : 'seccomp',
      ]);
    }
  });

  it.each([
    ['a memfd', 'import os\n    os.memfd_create("hoard")', 'memfd_create'],
    ['SysV shared memory', 'import ctypes\n    ctypes.CDLL(None).shmget(0, 1 << 30, 0o1600)', 'shmget'],
  ])('memory the address-space limit misses is refused: %s', async (_name, body, call) => {
    const report = await runPlugin(plugin(`def run(PluginInfo):\n    ${body}\n`), settings());
    expect(observedFlagged(report, 'kernel.denied').map((event) => event.args[0])).toEqual([call]);
    expect(report.status).toBe('failed');
  });

  it('the root, /runner, /dev and /dev/shm take no write: only /work and /tmp, each sized', async () => {
    const report = await runPlugin(
      plugin(`
def run(PluginInfo):
    refused = []
    for target in ("/x", "/runner/x", "/plugin/x", "/dev/x", "/dev/shm/x"):
        try:
            open(target, "w").write("x")
        except OSError as error:
            refused.append(error.errno)
    open("/work/ok", "w").write("x")
    open("/tmp/ok", "w").write("x")
    return refused
`),
      settings(),
    );
    expect(report).toMatchObject({ status: 'done', return_value: '[30, 30, 30, 30, 30]' });
  });

  it('threads share one process’s limits: four busy threads end at the CPU limit of the run', async () => {
    const report = await runPlugin(
      plugin(`
import threading

def spin():
    while True:
        pass

def run(PluginInfo):
    for _ in range(4):
        threading.Thread(target=spin, daemon=True).start()
    spin()
`),
      settings({ cpuSeconds: 1 }),
    );
    expect({ status: report.status, limit: report.limit }).toEqual({ status: 'timed-out', limit: 'cpu' });
  });

  it('the peak memory is the kernel’s account of the jail, also of a run the CPU limit ended', async () => {
    const held = 96 * 1024 * 1024;
    const report = await runPlugin(
      plugin(`
def run(PluginInfo):
    kept = bytearray(${held})
    for index in range(0, len(kept), 4096):
        kept[index] = 1
    while True:
        pass
`),
      settings({ cpuSeconds: 1 }),
    );
    expect({ status: report.status, limit: report.limit }).toEqual({ status: 'timed-out', limit: 'cpu' });
    expect(report.peak_memory_bytes).toBeGreaterThanOrEqual(held);
    expect(report.peak_memory_bytes).toBeLessThan(held + 64 * 1024 * 1024);
  });

  it('a flood of the channel without a newline ends the run at its output limit, in bounded memory', async () => {
    const report = await runPlugin(CHANNEL_FLOOD, settings({ wallSeconds: 60 }));
    expect({ status: report.status, limit: report.limit }).toEqual({ status: 'failed', limit: 'output' });
  });

  it('leaves nothing on the host', () => {
    expect(readdirSync('/tmp').filter((name) => name.startsWith('lying-'))).toEqual([]);
  });
});
