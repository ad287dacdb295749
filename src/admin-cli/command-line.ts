import { createRequire } from 'node:module';
import { COMMAND_TREE, CommandSpec } from './command-specs';

/** The part of commander's Command this check uses (commander is nest-commander's, not ours). */
interface CommanderCommand {
  name(name: string): CommanderCommand;
  description(text: string): CommanderCommand;
  command(nameAndArgs: string): CommanderCommand;
  action(handler: () => void): CommanderCommand;
  addHelpText(position: 'after', text: string): CommanderCommand;
  exitOverride(): CommanderCommand;
  parse(argv: string[], options: { from: 'user' }): CommanderCommand;
}

// The commander nest-commander parses with, so help and errors read as they will when a command runs.
const { Command } = createRequire(require.resolve('nest-commander'))('commander') as {
  Command: new () => CommanderCommand;
};

const declare = (parent: CommanderCommand, spec: CommandSpec): CommanderCommand =>
  parent.command(spec.arguments ? `${spec.name} ${spec.arguments}` : spec.name).description(spec.description);

/**
 * Parses the command line as svc-admin will, before any setting is read or database opened:
 * help, a mistyped command or a missing argument is answered here (commander writes it) and
 * leaves nothing behind. Returns the exit status, or null when the line names a command to run.
 */
export function answerWithoutRunning(args: string[], helpAfter: string): number | null {
  let runs = false;
  const run = () => {
    runs = true;
  };
  const program = new Command().name('svc-admin').addHelpText('after', helpAfter).exitOverride();
  for (const spec of COMMAND_TREE) {
    const command = declare(program, spec).exitOverride();
    if (!spec.subCommands) command.action(run);
    for (const sub of spec.subCommands ?? []) declare(command, sub).exitOverride().action(run);
  }
  try {
    program.parse(args, { from: 'user' });
  } catch (error) {
    return (error as { exitCode?: number }).exitCode ?? 1;
  }
  return runs ? null : 1;
}
