import type { JailSettings } from '../../src/plugin-jail';
import { bwrapPath, STRACE_PATH } from './prerequisites';

/**
 * The jail as its specs run it: the machine's bubblewrap and strace, limits small enough to
 * reach and the normal CPU priority, so a CPU limit is reached before a wall limit on a busy
 * machine too.
 */
export function testJailSettings(
  limits: Partial<JailSettings['limits']> = {},
  bounds: Partial<Pick<JailSettings, 'maxEvents'>> = {},
): JailSettings {
  return {
    bwrapPath: bwrapPath(),
    stracePath: STRACE_PATH,
    pythonPath: '/usr/bin/python3',
    limits: {
      cpuSeconds: 5,
      wallSeconds: 20,
      addressSpaceBytes: 512 * 1024 * 1024,
      fileSizeBytes: 16 * 1024 * 1024,
      processes: 16,
      cpuPriority: 'normal',
      ...limits,
    },
    maxEvents: 500,
    maxOutputBytes: 64 * 1024,
    ...bounds,
  };
}

/** A plugin of the framework's form around `body`. */
export const testPlugin = (body: string): Buffer => Buffer.from(`DESCRIPTION = "test"\n\n${body.trim()}\n`);
