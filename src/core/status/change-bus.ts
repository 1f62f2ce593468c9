import type { StatusChangeEvent } from './change-event.js';

/**
 * Carries the changes found in the status feed to the subscriptions that wait for them: in this
 * process (`InMemoryChangeBus`), or across replicas. Whoever loads a snapshot publishes what its
 * diff found, once; every subscriber of every replica on the bus receives it, in publish order.
 */
export interface ChangeBus {
  /** Fire and forget: never throws, never waits for delivery. */
  publish(event: StatusChangeEvent): void;
  /** Calls `listener` with each event published from now on; returns the unsubscribe. */
  subscribe(listener: (event: StatusChangeEvent) => void): () => void;
  /** Stops delivering and lets go of what the bus holds (connections, listeners). */
  close(): Promise<void>;
}
