import { applyDecorators, createParamDecorator, ExecutionContext } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, ValidateBy } from 'class-validator';
import { ArgumentSource, parseFlag, requestArguments, RequestArguments, textValues } from './request-params';

/**
 * The request arguments (body fields, else query-string arguments; see request-params.ts)
 * as one object, to be turned into the parameter's DTO class by the global ValidationPipe:
 * `@Args() args: RegisterArgs`.
 */
export const Args = createParamDecorator((_: unknown, context: ExecutionContext): RequestArguments =>
  requestArguments(context.switchToHttp().getRequest<ArgumentSource>()),
);

/** A value that the argument's own validator refuses; null is never a valid argument. */
const notNull = (name: string, message: string) =>
  ValidateBy({
    name,
    validator: { validate: (value: unknown) => value !== null, defaultMessage: () => message },
  });

/**
 * An argument's first text value (JSON numbers and booleans as text); absent: `undefined`,
 * and so is an empty one with `emptyIsAbsent` (a filter given empty is no filter).
 */
export const TextArg = (options: { emptyIsAbsent?: boolean } = {}) =>
  applyDecorators(
    Transform(({ value }) => {
      const first = textValues(value)[0];
      return options.emptyIsAbsent && first === '' ? undefined : first;
    }),
    IsOptional(),
    IsString(),
  );

/** Every text value of a repeatable argument (`key=a&key=b`); absent: the property's default. */
export const TextArgs = () =>
  applyDecorators(
    Transform(({ value }) => textValues(value)),
    IsString({ each: true }),
  );

/** An argument's first value when it is a string; any other value counts as absent. */
export const StringArg = () =>
  applyDecorators(
    Transform(({ value }) => {
      const first = (value as unknown[])[0];
      return typeof first === 'string' ? first : undefined;
    }),
    IsOptional(),
    IsString(),
  );

/** A flag: `true`/`false` or `1`/`0`, any case; absent or empty is `undefined`; anything else fails. */
export const FlagArg = (message = 'must be true or false') =>
  applyDecorators(
    Transform(({ value }) => parseFlag(textValues(value)[0])),
    notNull('isFlag', message),
  );

/**
 * An integer from `min` to `max` written in plain digits; absent or empty is the property's
 * default, anything else fails with `message`.
 */
export const IntegerArg = (options: {
  min: number;
  max: number;
  fallback: number;
  message: string;
  /** Spellings that also mean the fallback, e.g. `-1` for "no limit". */
  alsoFallback?: readonly string[];
}) =>
  applyDecorators(
    Transform(({ value }) => {
      const raw = textValues(value)[0];
      if (raw === undefined || raw === '' || options.alsoFallback?.includes(raw)) return options.fallback;
      if (!/^[0-9]{1,10}$/.test(raw)) return null;
      const number = Number(raw);
      return number >= options.min && number <= options.max ? number : null;
    }),
    notNull('isIntegerInRange', options.message),
  );
