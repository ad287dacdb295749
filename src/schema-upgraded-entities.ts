import type { SchemaUpgrade } from './database/schema-upgrade';
import { completePluginNameKeys } from './community-plugins/shared/plugin-name-keys';
import { UserPlugin } from './community-plugins/shared/user-plugin.entity';
import { completeUserMailboxes } from './users/mailbox-upgrade';
import { User } from './users/user.entity';

/**
 * The tables whose older shapes exist in the field and are brought up to date at every
 * start that migrates, by the API and svc-admin alike (svc-admin loads no plugin module).
 */
export const SCHEMA_UPGRADE: SchemaUpgrade = {
  entities: [User, UserPlugin],
  steps: [completePluginNameKeys, completeUserMailboxes],
};
