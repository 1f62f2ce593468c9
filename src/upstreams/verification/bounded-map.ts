/**
 * Runs `work` on every item with at most `limit` running at once, and resolves with one answer per
 * item, in order: its value, or the `Error` it failed with (as DataLoader takes them). Items wait
 * in order for a free worker; nothing is started beyond the limit.
 */
export async function mapBounded<Item, Value>(
  items: readonly Item[],
  limit: number,
  work: (item: Item) => Promise<Value>,
): Promise<(Value | Error)[]> {
  const answers: (Value | Error)[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        answers[index] = await work(items[index] as Item);
      } catch (error) {
        answers[index] = error instanceof Error ? error : new Error(String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return answers;
}
