import { z } from 'zod';

/*
 * Field schemas both upstreams' wire formats use: strict where a value is essential, lenient
 * (null instead of a failure) where a UI can do without it.
 */

/** An ISO 8601 date-time with or without an offset, as a Date. */
export const timestamp = z.iso.datetime({ offset: true }).transform((value) => new Date(value));

/** Absent, null or unparseable: null, so the UI shows "unknown" rather than losing the item. */
export const optionalTimestamp = timestamp
  .nullish()
  .catch(null)
  .transform((value) => value ?? null);

/** Absent, null or not a string: null. */
export const optionalText = z
  .string()
  .nullish()
  .catch(null)
  .transform((value) => value ?? null);
