import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A framework setting or tool path; `dirty` marks one that was changed through the API. */
@Entity('configuration')
export class ConfigurationItem {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 100 })
  key!: string;

  @Column({ type: 'varchar', length: 1024, default: '' })
  value!: string;

  @Column({ type: 'varchar', length: 64 })
  section!: string;

  @Column({ type: 'varchar', length: 512, default: '' })
  descrip!: string;

  @Column({ type: 'boolean', default: false })
  dirty!: boolean;
}
