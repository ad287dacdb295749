import { HttpStatus, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { Transactions } from '../database/transactions';
import { AuditLog } from '../audit/audit-log.service';
import { configurationDefaults, DefaultItem } from './configuration-defaults';
import type { ConfigurationItem } from './configuration-item.entity';
import { ConfigurationRepository } from './configuration.repository';
import {
  ConfigurationFilter,
  groupBySection,
  INCORRECT_PARAMETERS,
  RequestedChanges,
  valueProblem,
} from './configuration-rules';
import type { ConfigurationItemView } from './dto/configuration.dto';

@Injectable()
export class ConfigurationService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Configuration');

  constructor(
    private readonly items: ConfigurationRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const added = await this.seed();
    if (added > 0) this.logger.log(`Seeded ${added} configuration item(s)`);
  }

  /**
   * Adds the default items whose key is missing; an existing row is never touched, so a
   * value someone changed survives every restart. Returns how many were added.
   */
  async seed(defaults: DefaultItem[] = configurationDefaults()): Promise<number> {
    const existing = await this.items.keys();
    const missing = defaults.filter((item) => !existing.has(item.key));
    if (missing.length === 0) return 0;
    await this.items.insertMissing(missing.map((item) => ({ ...item, dirty: false })));
    return missing.length;
  }

  async list(filter: ConfigurationFilter): Promise<Record<string, ConfigurationItemView[]>> {
    // A few dozen rows: filtering here compares exactly on every database.
    return groupBySection((await this.items.all()).map(toView), filter);
  }

  /**
   * Sets every requested key to its value and marks it dirty, all or nothing: one unknown
   * key or unusable value and no row changes.
   */
  async update({ changes, notText }: RequestedChanges, actorUserId: number | null = null): Promise<void> {
    if (changes.length === 0 && notText.length === 0) {
      throw new ApiError(HttpStatus.BAD_REQUEST, INCORRECT_PARAMETERS);
    }
    await this.transactions.run(async (manager) => {
      const known = new Map((await this.items.all(manager)).map((item) => [item.key, item]));
      const requestedKeys = [...changes.map(([key]) => key), ...notText];
      if (requestedKeys.some((key) => !known.has(key))) {
        throw new ApiError(HttpStatus.UNPROCESSABLE_ENTITY, 'Invalid configuration item specified');
      }
      const problems: Record<string, string> = {};
      for (const key of notText) problems[key] = 'must be a text value';
      for (const [key, value] of changes) {
        const problem = valueProblem(value);
        if (problem) problems[key] = problem;
      }
      if (Object.keys(problems).length > 0) {
        throw new ApiError(HttpStatus.BAD_REQUEST, INCORRECT_PARAMETERS, problems);
      }
      for (const [key, value] of changes) {
        await this.items.setValue(manager, known.get(key)!.id, value);
      }
      await this.audit.append(manager, {
        actor: 'user',
        actorUserId,
        action: 'configuration_change',
        subject: 'configuration',
        details: Object.fromEntries(changes),
      });
    });
  }
}

function toView(item: ConfigurationItem): ConfigurationItemView {
  return {
    dirty: item.dirty,
    key: item.key,
    descrip: item.descrip,
    section: item.section,
    value: item.value,
  };
}
