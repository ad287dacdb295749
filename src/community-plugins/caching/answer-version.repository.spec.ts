import { Clock } from '../../common/clock';
import type { PlainReads } from '../../database/plain-reads';
import { AnswerVersionRepository } from './answer-version.repository';

/** Reads answered by hand: each holds the counters as they were when it began. */
class ControlledReads {
  counters = { serial: 1, approved: 0, listed: 0, shown: 0 };
  readonly begun: Array<{
    counters: Record<string, number>;
    answer: () => void;
    fail: (error: Error) => void;
  }> = [];

  fixedRows<T>(): Promise<T[]> {
    const counters = { ...this.counters };
    return new Promise<T[]>((resolve, reject) => {
      this.begun.push({ counters, answer: () => resolve([counters as T]), fail: reject });
    });
  }
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('AnswerVersionRepository.current', () => {
  let reads: ControlledReads;
  let versions: AnswerVersionRepository;

  beforeEach(() => {
    reads = new ControlledReads();
    versions = new AnswerVersionRepository(reads as unknown as PlainReads, new Clock());
  });

  it('a caller alone reads at once, and each read is its own', async () => {
    const first = versions.current();
    expect(reads.begun).toHaveLength(1);
    reads.begun[0].answer();
    await expect(first).resolves.toBe('1.0.0.0');
    reads.counters.serial = 2;
    const second = versions.current();
    expect(reads.begun).toHaveLength(2);
    reads.begun[1].answer();
    await expect(second).resolves.toBe('2.0.0.0');
  });

  it('callers arriving during a read share the next one, begun after it: never a read older than the call', async () => {
    const early = versions.current();
    // A write commits after the first read began, then three polls arrive.
    reads.counters.approved = 1;
    const late = [versions.current(), versions.current(), versions.current()];
    await flush();
    expect(reads.begun).toHaveLength(1);
    reads.begun[0].answer();
    await expect(early).resolves.toBe('1.0.0.0');
    await flush();
    expect(reads.begun).toHaveLength(2);
    reads.begun[1].answer();
    await expect(Promise.all(late)).resolves.toEqual(['1.1.0.0', '1.1.0.0', '1.1.0.0']);
  });

  it('a failed read fails only its own callers; the next caller reads again', async () => {
    const failing = versions.current();
    const following = versions.current();
    reads.begun[0].fail(new Error('database away'));
    await expect(failing).rejects.toThrow('database away');
    await flush();
    expect(reads.begun).toHaveLength(2);
    reads.begun[1].answer();
    await expect(following).resolves.toBe('1.0.0.0');
    const after = versions.current();
    expect(reads.begun).toHaveLength(3);
    reads.begun[2].answer();
    await expect(after).resolves.toBe('1.0.0.0');
  });
});
