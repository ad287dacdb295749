import type { Readable } from 'node:stream';

/**
 * A stream read as lines, bounded: at most `maxBytes` in all and `maxLine` a line (a plugin
 * can write gigabytes without a newline). Past either, `overflow` is called once and the rest
 * is read and dropped, so the writer never blocks.
 */
export function boundedLines(
  stream: Readable,
  bounds: { maxBytes: number; maxLine: number },
  line: (text: string) => void,
  overflow: () => void,
): Promise<void> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let total = 0;
  let over = false;
  const stop = () => {
    if (over) return;
    over = true;
    pending = [];
    overflow();
  };
  stream.on('data', (chunk: Buffer) => {
    if (over) return;
    total += chunk.length;
    if (total > bounds.maxBytes) return stop();
    let from = 0;
    for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10, from)) {
      pending.push(chunk.subarray(from, newline));
      line(Buffer.concat(pending).toString('utf8'));
      pending = [];
      pendingBytes = 0;
      from = newline + 1;
      if (over) return;
    }
    pendingBytes += chunk.length - from;
    if (pendingBytes > bounds.maxLine) return stop();
    if (from < chunk.length) pending.push(chunk.subarray(from));
  });
  return new Promise((resolve) => {
    stream.once('close', resolve);
    stream.once('end', resolve);
    stream.once('error', () => resolve());
  });
}
