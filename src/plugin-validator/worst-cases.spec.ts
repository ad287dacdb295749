import { ValidatorPool } from './validator-pool';
import { WORST_CASES, generateWorstCase } from './worst-cases';

/**
 * Each generated worst case at the upload limit is judged within the analyser's CPU budget
 * (ANALYSIS_BUDGET_MS) and accepted: every one is inside the profile, so a refusal here is for
 * time or a false positive. The bench times them (docs/benchmarks.md); no timed assertion here.
 */
describe('analyser worst cases', () => {
  const pool = new ValidatorPool({ size: 1, timeoutMs: 60_000 });
  afterAll(() => pool.onApplicationShutdown());

  it.each(WORST_CASES)('judges %s at 256 KB within its time budget', async (kind) => {
    const verdict = await pool.validate(Buffer.from(generateWorstCase(kind, 256 * 1024), 'utf8'));
    expect(verdict).toEqual({ ok: true, violations: [] });
  });
});
