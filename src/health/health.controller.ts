import { Controller, Get, HttpStatus, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { HealthCheckResult } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import { constants } from 'node:fs';
import { access, mkdir, statfs } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Public } from '../common/decorators';
import { success } from '../common/envelopes';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ApiDataResponse, ApiFailResponses, inline } from '../openapi/api-docs';

const CHECK_TIMEOUT_MS = 2_000;

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
  ) {}

  /** Liveness: the process answers. */
  @ApiOperation({ summary: 'Liveness' })
  @ApiDataResponse(200, inline({ type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } }))
  @Get()
  live() {
    return success({ status: 'ok' });
  }

  /** Readiness: database reachable, migrations applied, plugin directory writable with PLUGIN_DIR_MIN_FREE_BYTES free. */
  @ApiOperation({ summary: 'Readiness: database, migrations, plugin directory' })
  @ApiDataResponse(200, inline({ type: 'object', description: 'Up or down per check' }))
  @ApiFailResponses(503)
  @Get('ready')
  async ready() {
    try {
      const result: HealthCheckResult = await this.health.check([
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
              await mkdir(directory, { recursive: true, mode: 0o750 });
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

/** Only up/down per check: error texts could name hosts or paths. */
function statusesOf(details: HealthCheckResult['details'] | undefined): Record<string, string> | undefined {
  if (!details) return undefined;
  return Object.fromEntries(Object.entries(details).map(([key, value]) => [key, String(value.status)]));
}
