import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { checkJail, type JailSettings } from '../plugin-jail';
import { jailSettings } from './jail-settings';

/**
 * The jail as the settings describe it, and whether it holds here: the self-check runs once
 * per process, on the first test-run asked for (an app that never test-runs never spawns it),
 * and its answer is kept.
 */
@Injectable()
export class JailAvailability {
  readonly settings: JailSettings;
  private checked?: Promise<string | null>;
  private readonly logger = new Logger('PluginTestRun');

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.settings = jailSettings(config.pluginTestRun);
  }

  /** Null when the jail holds; else the one line saying what is missing and how to enable it. */
  problem(): Promise<string | null> {
    this.checked ??= checkJail(this.settings).then(
      (problem) => {
        if (problem !== null) this.logger.warn(`Test-runs are off: ${problem}`);
        return problem;
      },
      (error: unknown) =>
        `the jail's self-check failed (${error instanceof Error ? error.message : String(error)})`,
    );
    return this.checked;
  }
}
