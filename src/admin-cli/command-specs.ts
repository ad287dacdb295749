/**
 * svc-admin's commands, named once: the decorators of the Nest commands use them, and so does
 * the check of the command line that runs before any setting is read or database opened.
 */
export const COMMANDS = {
  promote: { name: 'promote', arguments: '<email>', description: 'Make the user with this email an admin' },
  demote: {
    name: 'demote',
    arguments: '<email>',
    description: 'Take admin rights from the user with this email',
  },
  deactivate: {
    name: 'deactivate',
    arguments: '<email>',
    description: 'Take the account out of service: login refused, every token revoked',
  },
  activate: {
    name: 'activate',
    arguments: '<email>',
    description: 'Put a deactivated account back in service',
  },
  secondFactor: { name: 'second-factor', description: 'Second factors (TOTP): reset' },
  secondFactorReset: {
    name: 'reset',
    arguments: '<email>',
    description: 'Turn off the lost second factor of the user with this email; every token revoked',
  },
  list: { name: 'list', description: 'List the admins, one per line: id, email and name, tab-separated' },
  plugins: { name: 'plugins', description: 'Plugin files: verify, test-run' },
  pluginsVerify: {
    name: 'verify',
    description:
      'Hash every approved plugin file in COMMUNITY_PLUGIN_DIR and compare it with its approved digest',
  },
  pluginsTestRun: {
    name: 'test-run',
    arguments: '<file>',
    description: 'Run a plugin file in the test-run jail and print the report of what it did, as JSON',
  },
  audit: { name: 'audit', description: 'The audit log: verify' },
  auditVerify: { name: 'verify', description: 'Check that every audit entry follows the hash chain' },
  backup: {
    name: 'backup',
    arguments: '<dir>',
    description: 'Back up the database, plugin files and secrets into <dir>',
  },
  restore: {
    name: 'restore',
    arguments: '<dir>',
    description: 'Restore a backup into an empty database and plugin dir',
  },
} as const;

export interface CommandSpec {
  name: string;
  arguments?: string;
  description: string;
}

/** The command tree as the user types it: top-level commands, each maybe with subcommands. */
export const COMMAND_TREE: Array<CommandSpec & { subCommands?: CommandSpec[] }> = [
  COMMANDS.promote,
  COMMANDS.demote,
  COMMANDS.deactivate,
  COMMANDS.activate,
  COMMANDS.list,
  { ...COMMANDS.plugins, subCommands: [COMMANDS.pluginsVerify, COMMANDS.pluginsTestRun] },
  { ...COMMANDS.audit, subCommands: [COMMANDS.auditVerify] },
  { ...COMMANDS.secondFactor, subCommands: [COMMANDS.secondFactorReset] },
  COMMANDS.backup,
  COMMANDS.restore,
];
