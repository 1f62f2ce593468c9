import { ClientCounts } from '../subscriptions/client-counts.js';

/** Which cap refused a socket: the variable that sets it. */
export type WebSocketCap = 'MAX_WEBSOCKETS' | 'MAX_WEBSOCKETS_PER_CLIENT';

export interface WebSocketSlotsOptions {
  /** WebSockets open at once on this replica (`MAX_WEBSOCKETS`). */
  readonly maxTotal: number;
  /** WebSockets one client may hold open at once (`MAX_WEBSOCKETS_PER_CLIENT`). */
  readonly maxPerClient: number;
}

/**
 * The WebSockets open now, counted in total and by client, so that no client holds every
 * connection the server takes: each socket takes a slot at its handshake and gives it back when
 * it closes.
 */
export class WebSocketSlots {
  readonly #maxTotal: number;
  readonly #maxPerClient: number;
  readonly #byClient = new ClientCounts();
  #total = 0;

  constructor({ maxTotal, maxPerClient }: WebSocketSlotsOptions) {
    this.#maxTotal = maxTotal;
    this.#maxPerClient = maxPerClient;
  }

  /** Slots taken now. */
  get size(): number {
    return this.#total;
  }

  /** Takes a slot for `client`: its release (call it once), or the cap that refuses it. */
  take(client: string): (() => void) | WebSocketCap {
    if (this.#byClient.of(client) >= this.#maxPerClient) return 'MAX_WEBSOCKETS_PER_CLIENT';
    if (this.#total >= this.#maxTotal) return 'MAX_WEBSOCKETS';
    const releaseClient = this.#byClient.add(client);
    this.#total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total -= 1;
      releaseClient();
    };
  }
}
