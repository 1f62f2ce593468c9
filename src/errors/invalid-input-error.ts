import { ExpectedError, type ExpectedErrorOptions } from './expected-error.js';

/** The input was refused, before anything was sent upstream or by the upstream's own checks. */
export class InvalidInputError extends ExpectedError {
  override readonly name = 'InvalidInputError';
  readonly code = 'BAD_USER_INPUT';
  readonly resultType = 'InvalidInputError';
  /** The input field at fault, as named in the operation's input, e.g. `address`. */
  readonly field: string;

  constructor(field: string, message: string, options: ExpectedErrorOptions = {}) {
    super(message, options);
    this.field = field;
  }

  override get extensions() {
    return { code: this.code, field: this.field };
  }
}
