import type { LoggerService } from '@nestjs/common';
import type { Level, Logger as Pino } from 'pino';

/** Nest's own start-up account: every module, controller and route mapped. */
const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/** How Nest's built-in exception handlers pass a stack: `error(message, stack)`. */
const STACK = /\n\s*at /;

/**
 * The app's logger, as Nest's LoggerService over pino: JSON lines, the caller's context in
 * `context`, errors under `err`. An operator sees one info line when the API is ready; what
 * Nest says about each module and route while starting is there at debug level.
 */
export class AppLogger implements LoggerService {
  constructor(readonly pino: Pino) {}

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.write('trace', message, optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.write('debug', message, optionalParams);
  }

  log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams.at(-1);
    const framework = typeof context === 'string' && FRAMEWORK_CONTEXTS.has(context);
    this.write(framework ? 'debug' : 'info', message, optionalParams);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.write('warn', message, optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.write('error', message, optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    this.write('fatal', message, optionalParams);
  }

  /** The last optional parameter is the context (Nest's Logger adds it); the rest are format arguments. */
  private write(level: Level, message: unknown, optionalParams: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    let params = optionalParams;
    if (optionalParams.length > 0) {
      fields.context = optionalParams.at(-1);
      params = optionalParams.slice(0, -1);
    }
    if (message instanceof Error) {
      fields.err = message;
      this.pino[level](fields, ...(params as []));
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level](Object.assign(fields, message), ...(params as []));
    } else if (
      level === 'error' &&
      params.length === 1 &&
      typeof params[0] === 'string' &&
      STACK.test(params[0])
    ) {
      const err = new Error(String(message));
      err.stack = params[0];
      this.pino[level]({ ...fields, err });
    } else {
      this.pino[level](fields, String(message), ...(params as []));
    }
  }
}
