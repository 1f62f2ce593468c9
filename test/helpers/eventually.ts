export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it gives something other than `undefined` or `false` (a background refetch
 * has landed, a notice has arrived, a process has noticed), and resolves with it; fails after
 * `timeoutMs` (of the monotonic clock: a test may have put `Date` on a clock of its own).
 */
export async function eventually<Value>(
  probe: () => Value | Promise<Value>,
  { timeoutMs = 10_000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Exclude<Value, undefined | false>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as Exclude<Value, undefined | false>;
    if (performance.now() > deadline) throw new Error(`still waiting after ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}
