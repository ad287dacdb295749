import { hashSync, verifySync } from '@node-rs/bcrypt';

export type BcryptJob =
  { op: 'hash'; password: string; cost: number } | { op: 'verify'; password: string; hash: string };

/**
 * @node-rs/bcrypt labels its hashes `$2y$` (PHP's name); `$2b$` (OpenBSD's) is the same
 * algorithm and output, and what every stored hash of this service carries, so new hashes
 * keep that label for whatever else reads the table.
 */
const hashAs2b = (password: string, cost: number): string =>
  hashSync(password, cost).replace(/^\$2y\$/, '$2b$');

/**
 * A BcryptPool thread (piscina): one computation per task, synchronously, so a login costs one
 * bcrypt computation on this thread and nothing on the event loop.
 */
export default function bcryptInThread(job: BcryptJob): string | boolean {
  return job.op === 'hash' ? hashAs2b(job.password, job.cost) : verifySync(job.password, job.hash);
}
