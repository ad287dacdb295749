import { Controller, Get, HttpStatus, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { HealthCheckResult } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import { constants } from 'node:fs';
import { access, statfs } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import {
  ForeignPluginDirectoryError,
  PluginDirectoryClaim,
} from '../community-plugins/files/plugin-directory-claim';
import { Public } from '../common/decorators';
import { StartupWork } from '../common/startup-work';
import { success } from '../common/envelopes';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ApiDataResponse, ApiFailResponses, inline } from '../openapi/api-docs';
import { Readiness } from './readiness';

const CHECK_TIMEOUT_MS = 2_000;
const FOREIGN_PREFIX = 'foreign: ';

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly database: TypeOrmHealthIndicator,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly readiness: Readiness,
    private readonly pluginDirectory: PluginDirectoryClaim,
    private readonly startupWork: StartupWork,
  ) {}

  /** Liveness: the process answers. */
  @ApiOperation({ summary: 'Liveness' })
  @ApiDataResponse(200, inline({ type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } }))
  @Get()
  live() {
    return success({ status: 'ok' });
  }

  /**
   * Readiness: start-up work done (StartupWork), database reachable, migrations applied, plugin
   * directory this database's and writable with PLUGIN_DIR_MIN_FREE_BYTES free.
   */
  @ApiOperation({ summary: 'Readiness: start-up work, database, migrations, plugin directory' })
  @ApiDataResponse(200, inline({ type: 'object', description: 'Up or down per check' }))
  @ApiFailResponses(503)
  @Get('ready')
  async ready() {
    try {
      const result: HealthCheckResult = await this.health.check([
        // Stopping (SIGTERM): the balancer takes the replica out while it still answers.
        () =>
          this.indicators.check('shutdown').attempt(() => {
            if (this.readiness.isStopping) throw new Error('stopping');
            return Promise.resolve();
          }),
        // The work a start does once it listens (the plugin files pass, the catalogue counts).
        () =>
          this.indicators.check('startup').attempt(() => {
            if (!this.startupWork.isDone) throw new Error('starting');
            return Promise.resolve();
          }),
        () =>
          this.database.pingCheck('database', { connection: this.dataSource }).withTimeout(CHECK_TIMEOUT_MS),
        () =>
          this.indicators
            .check('migrations')
            .attempt(async () => {
              if (await this.dataSource.showMigrations()) throw new Error('pending migrations');
            })
            .withTimeout(CHECK_TIMEOUT_MS),
        () =>
          this.indicators
            .check('plugin_directory')
            .attempt(async () => {
              const directory = this.config.communityPluginDir;
              try {
                await this.pluginDirectory.claim();
              } catch (error) {
                // The one case whose reason is shown: the operator must act, and it names no path.
                if (error instanceof ForeignPluginDirectoryError) {
                  throw new Error(`${FOREIGN_PREFIX}${error.reason}`, { cause: error });
                }
                throw error;
              }
              await access(directory, constants.W_OK);
              // Uploads would answer 507 soon: take the replica out before they do.
              const space = await statfs(directory);
              if (space.bavail * space.bsize < this.config.pluginDirMinFreeBytes) {
                throw new Error('plugin directory low on space');
              }
            })
            .withTimeout(CHECK_TIMEOUT_MS),
      ]);
      return success(result);
    } catch (error) {
      // Terminus answers a failed check with a 503 exception carrying the result.
      const result =
        error instanceof ServiceUnavailableException ? (error.getResponse() as HealthCheckResult) : undefined;
      throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, 'Service unavailable', statusesOf(result?.details));
    }
  }
}

/**
 * Only up/down per check: error texts could name hosts or paths. A plugin directory that is
 * another database's says so (`down: the plugin directory belongs to ...`).
 */
function statusesOf(details: HealthCheckResult['details'] | undefined): Record<string, string> | undefined {
  if (!details) return undefined;
  return Object.fromEntries(
    Object.entries(details).map(([key, value]) => {
      const message: unknown = value.message;
      const foreign = typeof message === 'string' && message.startsWith(FOREIGN_PREFIX);
      return [key, foreign ? `down: ${message.slice(FOREIGN_PREFIX.length)}` : String(value.status)];
    }),
  );
}
