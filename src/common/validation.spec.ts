import { HttpStatus } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { ApiError } from './api-error';
import { FlagArg, IntegerArg, TextArg } from './args';
import { FailWith, validationFailure } from './validation';

@FailWith(HttpStatus.BAD_REQUEST, 'Incorrect query parameters')
class Example {
  @FailWith(HttpStatus.BAD_REQUEST, 'Invalid name')
  @IntegerArg({ min: 1, max: 9, fallback: 1, message: 'must be a digit' })
  name = 1;

  @FlagArg()
  flag?: boolean;

  @IntegerArg({ min: 1, max: 5, fallback: 2, message: 'must be from 1 to 5' })
  count = 2;

  @TextArg()
  text?: string;
}

class Plain {
  @FlagArg()
  flag?: boolean;
}

async function failureOf(type: new () => object, args: Record<string, unknown[]>): Promise<ApiError | null> {
  const errors = await validate(plainToInstance(type, args), { stopAtFirstError: true });
  return errors.length === 0 ? null : validationFailure(errors);
}

const describeError = (error: ApiError | null) =>
  error && { status: error.getStatus(), message: error.message, errors: error.errors };

describe('validationFailure', () => {
  it('passes valid arguments, converted', async () => {
    const args = plainToInstance(Example, { flag: ['TRUE'], count: ['3'], text: [7] });
    expect(await validate(args)).toEqual([]);
    expect(args).toMatchObject({ name: 1, flag: true, count: 3, text: '7' });
  });

  it("answers with the class's failure, naming each failing argument", async () => {
    expect(describeError(await failureOf(Example, { flag: ['maybe'], count: ['9'] }))).toEqual({
      status: 400,
      message: 'Incorrect query parameters',
      errors: { flag: 'must be true or false', count: 'must be from 1 to 5' },
    });
  });

  it("answers with an argument's own failure when it is the first to fail", async () => {
    expect(describeError(await failureOf(Example, { name: ['x'], flag: ['maybe'] }))).toEqual({
      status: 400,
      message: 'Invalid name',
      errors: undefined,
    });
  });

  it('fails closed with a plain 400 for a DTO that names no failure', async () => {
    expect(describeError(await failureOf(Plain, { flag: ['maybe'] }))).toEqual({
      status: 400,
      message: 'Invalid request arguments',
      errors: { flag: 'must be true or false' },
    });
  });
});
