/**
 * How many of something clients hold open now (sockets, subscriptions): in total, and by the
 * client's address as the rate limits know it. A client with none has no entry, so the map holds
 * only the clients that hold something.
 */
export class ClientCounts {
  readonly #byClient = new Map<string, number>();
  #total = 0;

  /** What all clients hold now. */
  get total(): number {
    return this.#total;
  }

  /** What `client` holds now. */
  of(client: string): number {
    return this.#byClient.get(client) ?? 0;
  }

  /** Counts one more for `client`: its release, to be called once, counts it down. */
  add(client: string): () => void {
    this.#byClient.set(client, this.of(client) + 1);
    this.#total += 1;
    return () => {
      this.#total -= 1;
      const left = this.of(client) - 1;
      if (left > 0) this.#byClient.set(client, left);
      else this.#byClient.delete(client);
    };
  }
}
