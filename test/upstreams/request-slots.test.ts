import { describe, expect, it } from 'vitest';
import { RequestSlots } from '../../src/upstreams/request-slots.js';

describe('RequestSlots', () => {
  it('hands a freed slot to the longest waiter, and refuses a waiter none came free for within waitMs', async () => {
    const slots = new RequestSlots(1);
    expect(await slots.acquire(10_000)).toBe(true);
    const granted: string[] = [];
    const first = slots.acquire(10_000).then((ok) => granted.push(`first ${ok}`));
    const second = slots.acquire(10_000).then((ok) => granted.push(`second ${ok}`));
    // All slots stay taken: this waiter is refused once its wait is over, not served late.
    expect(await slots.acquire(20)).toBe(false);
    expect(granted).toEqual([]);
    slots.release();
    await first;
    expect(granted).toEqual(['first true']);
    slots.release();
    await second;
    expect(granted).toEqual(['first true', 'second true']);
    // The refused waiter took no slot: once the last is released, one is free at once.
    slots.release();
    expect(await slots.acquire(0)).toBe(true);
  });
});
