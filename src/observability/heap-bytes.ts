/**
 * What V8 spends on a string's characters: one byte each, two once any is outside Latin-1. What
 * the caches count a text as (their estimates, `npm run bench:caches`).
 */
export function stringBytes(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the Latin-1 range, on purpose
  return /[^\u0000-\u00ff]/.test(text) ? text.length * 2 : text.length;
}
