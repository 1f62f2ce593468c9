/** What an item of an `IndexedHeap` carries: its place there, -1 when it is in none. */
export interface HeapItem {
  heapIndex: number;
}

/**
 * A binary min-heap whose items know their place, so that any of them is removed, or moved after
 * its key changed, in O(log n). An item is in at most one heap at a time.
 */
export class IndexedHeap<Item extends HeapItem> {
  readonly #items: Item[] = [];
  readonly #before: (a: Item, b: Item) => boolean;

  /** `before(a, b)`: whether `a` comes out first. */
  constructor(before: (a: Item, b: Item) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): Item | undefined {
    return this.#items[0];
  }

  has(item: Item): boolean {
    return item.heapIndex >= 0 && this.#items[item.heapIndex] === item;
  }

  push(item: Item): void {
    item.heapIndex = this.#items.length;
    this.#items.push(item);
    this.#up(item.heapIndex);
  }

  remove(item: Item): void {
    if (!this.has(item)) return;
    const index = item.heapIndex;
    const last = this.#items.pop() as Item;
    item.heapIndex = -1;
    if (last === item) return;
    this.#items[index] = last;
    last.heapIndex = index;
    this.update(last);
  }

  /** Puts `item` back in its place after its key changed. */
  update(item: Item): void {
    if (!this.has(item)) return;
    this.#up(item.heapIndex);
    this.#down(item.heapIndex);
  }

  /** Items `holds` is true of, counted from the top down, where it holds of every ancestor. */
  countWhile(holds: (item: Item) => boolean, index = 0): number {
    const item = this.#items[index];
    if (!item || !holds(item)) return 0;
    return 1 + this.countWhile(holds, 2 * index + 1) + this.countWhile(holds, 2 * index + 2);
  }

  /** Every item, in no order. */
  values(): readonly Item[] {
    return this.#items;
  }

  /** Empties the heap. */
  clear(): void {
    for (const item of this.#items) item.heapIndex = -1;
    this.#items.length = 0;
  }

  #up(from: number): void {
    let index = from;
    const item = this.#items[index] as Item;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.#items[parentIndex] as Item;
      if (!this.#before(item, parent)) break;
      this.#items[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    this.#items[index] = item;
    item.heapIndex = index;
  }

  #down(from: number): void {
    let index = from;
    const item = this.#items[index] as Item;
    const { length } = this.#items;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const rightItem = this.#items[right];
      const child = rightItem && this.#before(rightItem, this.#items[left] as Item) ? right : left;
      const childItem = this.#items[child] as Item;
      if (!this.#before(childItem, item)) break;
      this.#items[index] = childItem;
      childItem.heapIndex = index;
      index = child;
    }
    this.#items[index] = item;
    item.heapIndex = index;
  }
}
