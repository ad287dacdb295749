import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { validationFailure } from './validation';

type DtoClass = abstract new (...args: never[]) => unknown;
type Plain = string | number | boolean | bigint | null | undefined;
type Form = Array<[string, Plain | Plain[]]>;

const isPlain = (value: unknown): value is Plain =>
  value === null || (typeof value !== 'object' && typeof value !== 'function' && typeof value !== 'symbol');

/** The DTO's own values, when each is plain or a list of plain values; else null. */
function formOf(dto: object): Form | null {
  const form: Form = [];
  for (const [key, value] of Object.entries(dto)) {
    if (isPlain(value)) form.push([key, value]);
    else if (Array.isArray(value) && value.every(isPlain)) form.push([key, [...value]]);
    else return null;
  }
  return form;
}

function fromForm(metatype: DtoClass, form: Form): object {
  const dto = Object.create(metatype.prototype as object) as Record<string, unknown>;
  for (const [key, value] of form) dto[key] = Array.isArray(value) ? [...value] : value;
  return dto;
}

const isEmpty = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;

/**
 * The global ValidationPipe, which turns each request's arguments (`@Args()`) into its DTO. A
 * request without arguments (GET sessions, most list pages) makes the same DTO every time,
 * so it is made and validated once per class and each such request gets a fresh copy:
 * class-transformer and class-validator cost more than the rest of such a GET's own code.
 * Arguments, a class whose empty form fails (thrown every time, never remembered), or a DTO
 * holding more than plain values go the whole way every time.
 */
export class ArgumentsPipe extends ValidationPipe {
  private readonly emptyForms = new WeakMap<DtoClass, Form | null>();

  // Request DTOs are validated wherever they are, @Args() included; unknown arguments are
  // dropped, each argument stops at its first failure, and a failure keeps its route's message
  // (FailWith).
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: false,
      transform: true,
      validateCustomDecorators: true,
      stopAtFirstError: true,
      // The failure's DTO class is read from the error's target; values never reach a body.
      validationError: { target: true, value: false },
      exceptionFactory: validationFailure,
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype as DtoClass | undefined;
    if (metadata.type !== 'custom' || !metatype || !isEmpty(value)) return super.transform(value, metadata);
    const known = this.emptyForms.get(metatype);
    if (known) return fromForm(metatype, known);
    const made: unknown = await super.transform(value, metadata);
    if (known === undefined) {
      // Object (an interface's type) is handed on as it came: not a DTO.
      const form = metatype !== Object && made instanceof metatype ? formOf(made as object) : null;
      this.emptyForms.set(metatype, form);
    }
    return made;
  }
}
