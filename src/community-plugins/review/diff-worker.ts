import { diffHunks, type DiffHunks } from './unified-diff';

export interface DiffJob {
  before: string;
  after: string;
}

/** A DiffPool thread (piscina): one diff per task, bounded by unified-diff's work budget. */
export default function diffInThread(job: DiffJob): DiffHunks {
  return diffHunks(job.before, job.after);
}
