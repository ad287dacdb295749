/**
 * Computed values by key, kept while their sizes add up to at most `maxBytes` (the least
 * recently used go first), and computed once however many ask at the same time: callers of a
 * key being computed share that computation. A failed computation is not kept.
 */
export class DiffCache<V> {
  /** Insertion order is use order: a hit moves its entry to the end. */
  private readonly kept = new Map<string, { value: V; bytes: number }>();
  private readonly computing = new Map<string, Promise<V>>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
    /** A value that must not be kept (e.g. a verdict the validator could not give). */
    private readonly keep: (value: V) => boolean = () => true,
  ) {}

  get(key: string, compute: () => Promise<V>): Promise<V> {
    const hit = this.kept.get(key);
    if (hit) {
      this.kept.delete(key);
      this.kept.set(key, hit);
      return Promise.resolve(hit.value);
    }
    const running = this.computing.get(key);
    if (running) return running;
    const computed = Promise.resolve()
      .then(compute)
      .then((value) => {
        if (this.keep(value)) this.store(key, value);
        return value;
      })
      .finally(() => this.computing.delete(key));
    this.computing.set(key, computed);
    return computed;
  }

  private store(key: string, value: V): void {
    const bytes = this.sizeOf(value);
    if (bytes > this.maxBytes) return;
    this.kept.set(key, { value, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}
