import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

type Handler = (...args: never[]) => unknown;
type Controller = abstract new (...args: never[]) => unknown;

/** What names a route: an execution context, or a route found before Nest's pipeline runs. */
export type RouteRef = Pick<ExecutionContext, 'getClass' | 'getHandler'>;

/**
 * A route's metadata under one key (the handler's, else its controller's), read once per route:
 * decorators are fixed once the app is built, and the guards that run on every request would
 * otherwise ask reflect-metadata again each time.
 */
export class RouteMetadata<T> {
  private readonly read = new WeakMap<Controller, WeakMap<Handler, { value: T | undefined }>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly key: string,
  ) {}

  of(route: RouteRef): T | undefined {
    const controller = route.getClass() as Controller;
    const handler = route.getHandler() as Handler;
    let handlers = this.read.get(controller);
    if (!handlers) this.read.set(controller, (handlers = new WeakMap()));
    let entry = handlers.get(handler);
    if (!entry) {
      entry = { value: this.reflector.getAllAndOverride<T | undefined>(this.key, [handler, controller]) };
      handlers.set(handler, entry);
    }
    return entry.value;
  }
}
