export { type PausableRun, type RunHooks, runPlugin } from './run-plugin';
export { checkJail } from './self-check';
export type {
  JailLimits,
  JailSettings,
  TestRunEvent,
  TestRunLimit,
  TestRunReport,
  TestRunStatus,
} from './types';
