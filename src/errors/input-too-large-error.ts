import { ExpectedError } from './expected-error.js';

/**
 * A verification's source input is over its size limit (`VERIFY_MAX_SOURCE_BYTES`): refused before
 * anything was sent upstream, as the `InvalidInputError` result with the limit in `maxBytes`.
 */
export class InputTooLargeError extends ExpectedError {
  override readonly name = 'InputTooLargeError';
  readonly code = 'INPUT_TOO_LARGE';
  readonly resultType = 'InvalidInputError';
  /** The input field at fault, e.g. `stdJsonInput`. */
  readonly field: string;
  readonly maxBytes: number;

  constructor(field: string, maxBytes: number) {
    super(
      `${field} is larger than the ${maxBytes} bytes of JSON the gateway accepts for a verification (VERIFY_MAX_SOURCE_BYTES); nothing was sent to the verification service.`,
    );
    this.field = field;
    this.maxBytes = maxBytes;
  }

  override get extensions() {
    return { code: this.code, field: this.field, maxBytes: this.maxBytes };
  }
}
