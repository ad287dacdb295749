import 'reflect-metadata';
import { HttpStatus } from '@nestjs/common';
import { IsInt, IsObject, IsOptional, IsString, Min } from 'class-validator';
import { Transform } from 'class-transformer';
import { ApiError } from './api-error';
import { ArgumentsPipe } from './arguments-pipe';
import { FlagArg, TextArg } from './args';
import { FailWith } from './validation';

class ListArgs {
  @TextArg()
  q?: string;

  @FlagArg()
  active?: boolean;

  @IsOptional()
  @Transform(({ value }) => Number((value as string[])[0]))
  @IsInt()
  @Min(0)
  offset = 0;

  @IsOptional()
  @IsString({ each: true })
  tags: string[] = ['web'];
}

@FailWith(HttpStatus.BAD_REQUEST, 'Missing name')
class NamedArgs {
  @IsString()
  name!: string;
}

class Nested {
  @IsObject()
  inner = { count: 0 };
}

/** What @Args() hands the pipe: the request's arguments, in an object without a prototype. */
const args = (entries: Record<string, string[]> = {}) =>
  Object.assign(Object.create(null) as Record<string, string[]>, entries);

const asArgs = (metatype: unknown) => ({
  type: 'custom' as const,
  metatype: metatype as never,
  data: undefined,
});

async function failureOf(
  work: Promise<unknown>,
): Promise<{ status: number; message: string; errors: unknown }> {
  const error = await work.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return { status: error.getStatus(), message: error.message, errors: error.errors };
}

describe('ArgumentsPipe', () => {
  it('gives a request without arguments the DTO the whole way makes, a fresh copy each time', async () => {
    const pipe = new ArgumentsPipe();
    const whole = (await new ArgumentsPipe().transform(args(), asArgs(ListArgs))) as ListArgs;
    const first = (await pipe.transform(args(), asArgs(ListArgs))) as ListArgs;
    const second = (await pipe.transform(args(), asArgs(ListArgs))) as ListArgs;
    for (const made of [first, second]) {
      expect(made).toBeInstanceOf(ListArgs);
      expect(Object.entries(made)).toEqual(Object.entries(whole));
    }
    expect(whole).toEqual(Object.assign(new ListArgs(), { q: undefined, active: undefined }));
    first.tags.push('changed');
    first.offset = 9;
    const third = (await pipe.transform(args(), asArgs(ListArgs))) as ListArgs;
    expect(third.tags).toEqual(['web']);
    expect(third.offset).toBe(0);
    expect(second.tags).not.toBe(third.tags);
  });

  it('still reads and checks arguments when there are some', async () => {
    const pipe = new ArgumentsPipe();
    await pipe.transform(args(), asArgs(ListArgs));
    const read = (await pipe.transform(
      args({ q: ['scan'], active: ['true'], offset: ['3'] }),
      asArgs(ListArgs),
    )) as ListArgs;
    expect([read.q, read.active, read.offset, read.tags]).toEqual(['scan', true, 3, ['web']]);
    const refused = await failureOf(pipe.transform(args({ offset: ['-1'] }), asArgs(ListArgs)));
    expect(refused.status).toBe(400);
  });

  it('refuses a class whose empty form fails every time, with the same answer', async () => {
    const pipe = new ArgumentsPipe();
    const answers = [
      await failureOf(pipe.transform(args(), asArgs(NamedArgs))),
      await failureOf(pipe.transform(args(), asArgs(NamedArgs))),
    ];
    expect(answers[0]).toEqual({
      status: 400,
      message: 'Missing name',
      errors: { name: expect.any(String) },
    });
    expect(answers[1]).toEqual(answers[0]);
  });

  it('makes anew a DTO that holds more than plain values, so no request shares one', async () => {
    const pipe = new ArgumentsPipe();
    const first = (await pipe.transform(args(), asArgs(Nested))) as Nested;
    first.inner.count = 5;
    const second = (await pipe.transform(args(), asArgs(Nested))) as Nested;
    expect(second).toBeInstanceOf(Nested);
    expect(second.inner).toEqual({ count: 0 });
  });

  it('hands on what is not a DTO as it came (an interface is Object to the pipe)', async () => {
    const pipe = new ArgumentsPipe();
    for (let round = 0; round < 2; round++) {
      const value = args();
      expect(await pipe.transform(value, asArgs(Object))).toBe(value);
    }
  });
});
