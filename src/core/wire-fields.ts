import { z } from 'zod';

/*
 * Field schemas both upstreams' wire formats use: strict where a value is essential, lenient
 * (null instead of a failure) where a UI can do without it.
 */

/** `schema`'s value; absent, null or not valid: `fallback`, so that the item stands. */
export const lenient = <Output, const Fallback extends Output | null>(
  schema: z.ZodType<Output>,
  fallback: Fallback,
) =>
  schema
    .nullish()
    .catch(fallback)
    .transform((value) => value ?? fallback);

/** An ISO 8601 date-time with or without an offset, as a Date. */
export const timestamp = z.iso.datetime({ offset: true }).transform((value) => new Date(value));

/** Absent, null or unparseable: null, so the UI shows "unknown" rather than losing the item. */
export const optionalTimestamp = lenient(timestamp, null);

/** Absent, null or not a string: null. */
export const optionalText = lenient(z.string(), null);
