import { closeSharedValidator, validate } from './validator';
import { ValidatorBusyError, ValidatorPool, type ValidatorPoolOptions } from './validator-pool';

const plugin = (body: string, prelude = ''): Buffer =>
  Buffer.from(`${prelude}DESCRIPTION = "Test plugin"\n\ndef run(PluginInfo):\n    ${body}\n`, 'utf8');

/** An ordinary plugin of about 200 KB: a hundred milliseconds of parsing and rules. */
function largePlugin(): Buffer {
  const parts = ['import re\n\nDESCRIPTION = "Large plugin"\n'];
  for (let index = 0; index < 1_000; index++) {
    parts.push(`
def step_${index}(info):
    found = [line for line in info.get("lines", []) if re.search(r"port=(\\d+)", line)]
    return {"count": len(found), "first": found[:${index % 7}], "id": ${index}}
`);
  }
  parts.push('\ndef run(PluginInfo):\n    return step_0(PluginInfo)\n');
  return Buffer.from(parts.join(''), 'utf8');
}

const internalError = (message: string) => ({
  ok: false,
  violations: [{ rule: 'internal-error', message, line: 1, column: 1 }],
});
const FAILED = 'Validator failed internally; plugin rejected';
const tooSlow = (message: string) => ({
  ok: false,
  violations: [{ rule: 'analysis-too-slow', message, line: 1, column: 1 }],
});
const OVERRAN = 'The analysis took longer than its time limit; plugin rejected';

describe('ValidatorPool', () => {
  const pools: ValidatorPool[] = [];
  const pool = newPool();
  const warnings: string[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((each) => each.onApplicationShutdown()));
    await closeSharedValidator();
  });

  function newPool(options?: ValidatorPoolOptions): ValidatorPool {
    const created = new ValidatorPool({ warn: (message) => warnings.push(message), ...options });
    pools.push(created);
    return created;
  }

  it('answers as validate() does, for several plugins at once', async () => {
    const sources = [
      plugin('return None'),
      plugin('return 1', 'import json, os.path\n'),
      plugin('x = eval(PluginInfo)\n    return open("f", "w")'),
      Buffer.from([0xff, 0xfe, 0x00]),
      largePlugin(),
    ];
    // Each from its own uploader: one uploader may have only two waiting.
    const verdicts = await Promise.all(sources.map((source, index) => pool.validate(source, `u${index}`)));
    expect(verdicts).toEqual(await Promise.all(sources.map((source) => validate(source))));
    expect(verdicts.map((verdict) => verdict.ok)).toEqual([true, false, false, false, true]);
  });

  it('keeps the event loop free during a large validation', async () => {
    const source = largePlugin();
    // The default deadline is the next test's: on a machine busy with other spec files the 200 KB
    // took longer, and this test is about the event loop, not the deadline.
    const roomy = newPool({ timeoutMs: 120_000 });
    await roomy.validate(plugin('return None'));
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    const verdict = await roomy.validate(source);
    clearInterval(timer);
    expect(verdict).toEqual({ ok: true, violations: [] });
    expect(ticks).toBeGreaterThan(5);
  });

  it('refuses for time, as a finding, when a validation overruns the hard timeout', async () => {
    const strict = newPool({ size: 1, timeoutMs: 5 });
    await expect(strict.validate(largePlugin())).resolves.toEqual(tooSlow(OVERRAN));
  });

  it('refuses a plugin past the analyser CPU budget itself, and the same worker takes the next one', async () => {
    const budgeted = newPool({ size: 1, budgetMs: 5 });
    await expect(budgeted.validate(plugin('return None'))).resolves.toEqual({ ok: true, violations: [] });
    const idle = (budgeted as unknown as { idle: Array<{ child: { pid: number } }> }).idle;
    const pid = idle[0].child.pid;
    const verdict = await budgeted.validate(largePlugin());
    expect(verdict.ok).toBe(false);
    expect(verdict.violations).toEqual([
      expect.objectContaining({ rule: 'analysis-too-slow', line: 1, column: 1 }),
    ]);
    expect(verdict.violations[0].message).toContain('budget of 0.005 s');
    // Not killed: the analyser answered in time and is idle again.
    expect(idle.map((worker) => worker.child.pid)).toEqual([pid]);
    await expect(budgeted.validate(plugin('return None'))).resolves.toEqual({ ok: true, violations: [] });
  });

  it('fails the upload closed when its worker crashes, and validates the next one on a new worker', async () => {
    const single = newPool({ size: 1 });
    // Not a Buffer: the request is not base64, the analyser's loop raises and the process ends.
    const crashed = single.validate(42 as unknown as Buffer);
    const next = single.validate(plugin('return None'));
    await expect(crashed).resolves.toEqual(internalError(FAILED));
    await expect(next).resolves.toEqual({ ok: true, violations: [] });
  });

  it('kills an overrunning worker and validates the next upload on a new one', async () => {
    const single = newPool({ size: 1, timeoutMs: 2_000 });
    await expect(single.validate(plugin('return None'))).resolves.toEqual({ ok: true, violations: [] });
    // Stop the (only, now idle) worker: it will answer nothing, so the timeout ends it.
    const [worker] = (single as unknown as { idle: Array<{ child: { pid: number } }> }).idle;
    process.kill(worker.child.pid, 'SIGSTOP');
    await expect(single.validate(plugin('return None'))).resolves.toEqual(tooSlow(OVERRAN));
    await expect(single.validate(plugin('return None'))).resolves.toEqual({ ok: true, violations: [] });
    expect(warnings.some((warning) => warning.includes('longer than 2000 ms'))).toBe(true);
  });

  it('fails closed when the interpreter cannot be started', async () => {
    const broken = newPool({ size: 1, python: '/nonexistent/python3' });
    await expect(broken.validate(plugin('return None'))).resolves.toEqual(internalError(FAILED));
  });

  it('refuses an upload at once, without a verdict, when too many are waiting', async () => {
    const single = newPool({ size: 1, maxQueued: 0 });
    const first = single.validate(plugin('return None'));
    await expect(single.validate(plugin('return 1'))).rejects.toThrow(ValidatorBusyError);
    await expect(first).resolves.toEqual({ ok: true, violations: [] });
  });

  it('keeps room for other uploaders when one has too many waiting', async () => {
    const single = newPool({ size: 1, maxQueued: 8, maxQueuedPerUploader: 1 });
    const flood = [1, 2, 3].map(() => single.validate(plugin('return None'), 'flooder'));
    const other = single.validate(plugin('return None'), 'other');
    await expect(flood[2]).rejects.toThrow(ValidatorBusyError);
    await expect(other).resolves.toEqual({ ok: true, violations: [] });
    await expect(Promise.all(flood.slice(0, 2))).resolves.toHaveLength(2);
  });

  it('refuses uploads without a verdict after shutdown', async () => {
    const closed = newPool();
    await closed.onApplicationShutdown();
    await expect(closed.validate(plugin('return None'))).rejects.toThrow(ValidatorBusyError);
  });
});
