import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ConfigurationItem } from './configuration-item.entity';

/** Every query on `configuration_items`. */
@Injectable()
export class ConfigurationRepository {
  constructor(@InjectRepository(ConfigurationItem) private readonly items: Repository<ConfigurationItem>) {}

  async keys(): Promise<Set<string>> {
    return new Set((await this.items.find({ select: { key: true } })).map((item) => item.key));
  }

  /**
   * INSERT that skips rows whose key exists (INSERT OR IGNORE, INSERT IGNORE): replicas that
   * boot together may seed at once, and the unique key makes the loser skip the row.
   * updateEntity(false): TypeORM would read back generated ids, and on MySQL a batch whose
   * rows were all skipped has none, which it reports as an error.
   */
  async insertMissing(items: Array<Omit<ConfigurationItem, 'id'>>): Promise<void> {
    await this.items
      .createQueryBuilder()
      .insert()
      .into(ConfigurationItem)
      .values(items)
      .orIgnore()
      .updateEntity(false)
      .execute();
  }

  all(manager: EntityManager = this.items.manager): Promise<ConfigurationItem[]> {
    return manager.find(ConfigurationItem);
  }

  async setValue(manager: EntityManager, id: number, value: string): Promise<void> {
    await manager.update(ConfigurationItem, { id }, { value, dirty: true });
  }
}
