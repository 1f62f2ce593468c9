import { setImmediate as nextTurn } from 'node:timers/promises';
import type { GraphQLError } from 'graphql';
import type { StreamEndReason } from './change-stream.js';
import type {
  Admission,
  SharedSource,
  Subscriber,
  SubscriptionField,
  SubscriptionMetrics,
  SubscriptionRegistry,
} from './subscription-registry.js';

/** A shared subscription's source that started a stream of items, for every subscriber. */
export interface SourceStream<Item, Meta> {
  readonly kind: 'stream';
  readonly items: AsyncIterator<Item>;
  /** What a transport needs to begin each subscriber's answer (an SSE answer's headers). */
  readonly meta: Meta;
  /**
   * Whether an item is an event, not a keep-alive: each event's fan-out is timed, and a late
   * subscriber of a subscription whose events show its whole state starts with the last.
   */
  readonly isEvent: (item: Item) => boolean;
  /** Lets go of the source (its request's abort): nobody listens any more. */
  readonly stop: () => void;
}

/**
 * What a shared subscription's source produced when it started: a stream, or one answer, the same
 * for every subscriber of the operation (its errors).
 */
export type SourceStart<Item, Meta> =
  | SourceStream<Item, Meta>
  | { readonly kind: 'answer'; readonly answer: unknown };

/** One subscriber of a shared subscription, as its transport serves it. */
export interface SubscriptionSink<Item, Meta> {
  /** Admitted: start the answer. Called before any item. */
  begin(meta: Meta): void;
  /** The next item; a sink whose client falls too far behind ends itself (`leave('slow')`). */
  next(item: Item): void;
  /** The source ended: end the answer. */
  complete(): void;
  /** Not admitted (`TOO_MANY_SUBSCRIPTIONS`): answer with this error, as `begin` would start. */
  refuse(error: GraphQLError, meta: Meta): void;
  /** The operation answered without a stream: send that answer. */
  answer(answer: unknown): void;
  /**
   * The operation's stream is not one a crowd may share (its field is not a subscription the
   * registry admits): the first subscriber gets the source's own stream, the others run the
   * operation on their own.
   */
  alone(own: SourceStream<Item, Meta> | undefined): void;
  /** Starting the source failed. */
  fail(error: unknown): void;
}

export interface SharedSubscriptionsOptions {
  readonly registry: Pick<SubscriptionRegistry, 'admit'>;
  /**
   * Counts the errors subscribers are sent here (refusals, `SLOW_SUBSCRIBER`), as answers' are, and
   * times each fan-out.
   */
  readonly metrics: Pick<SubscriptionMetrics, 'error' | 'subscriptionFannedOut'>;
}

/** Subscribers written to in one turn of the event loop: the fan-out lets other work through. */
const FAN_OUT_BATCH = 64;

/**
 * Subscribers of the same operation (the same request bytes, and whatever else of the request the
 * answer depends on, in its `key`) share one subscription: its source is run once, by the
 * pipeline every request runs (parsing, validation, limits, the resolver), and each of its items
 * (an SSE frame, a graphql-ws result) is handed to every subscriber as is. Per subscriber the
 * gateway keeps its connection and a sink; opening one more costs a map lookup and an admission.
 *
 * Each subscriber is admitted by the registry's own rule (`admit`), on whatever transport, once
 * the source has said which field it is; the source itself is counted nowhere. Items go out in
 * batches that yield to the event loop, one item to every subscriber before the next: the next
 * item is read from the source only then, so a source the fan-out cannot keep up with falls behind
 * in its own stream, bounded by `SUBSCRIPTION_BACKLOG`. A late subscriber of a subscription whose
 * items show the whole state (`statusPageChanged`, `verificationJobChanged`) starts with the last.
 * The source stops when its last subscriber leaves.
 */
export class SharedSubscriptions<Item, Meta> {
  readonly #options: SharedSubscriptionsOptions;
  readonly #channels = new Map<string, Channel<Item, Meta>>();

  constructor(options: SharedSubscriptionsOptions) {
    this.#options = options;
  }

  /**
   * Joins `subscriber` to the subscription of `key`, starting its source with `start` when there
   * is none: the sink hears what happens. Returns how the subscriber lets go.
   */
  join(
    key: string,
    subscriber: Subscriber,
    sink: SubscriptionSink<Item, Meta>,
    start: (sharedBy: SharedSource) => Promise<SourceStart<Item, Meta>>,
  ): Admission {
    let channel = this.#channels.get(key);
    if (!channel) {
      const created = new Channel<Item, Meta>(this.#options, () => {
        if (this.#channels.get(key) === created) this.#channels.delete(key);
      });
      channel = created;
      this.#channels.set(key, created);
      created.start(start);
    }
    return channel.join(subscriber, sink);
  }
}

interface Member<Item, Meta> {
  readonly subscriber: Subscriber;
  readonly sink: SubscriptionSink<Item, Meta>;
  admission: Admission | undefined;
  left: boolean;
}

/** One shared subscription: its source, its subscribers, its fan-out. */
class Channel<Item, Meta> {
  readonly #options: SharedSubscriptionsOptions;
  readonly #forget: () => void;
  /** Joined before the source said what it is. */
  #waiting: Member<Item, Meta>[] = [];
  /** Admitted and begun. */
  readonly #members = new Set<Member<Item, Meta>>();
  #field: SubscriptionField | undefined;
  #wholeStateEvents = false;
  #source: SourceStream<Item, Meta> | undefined;
  /** The last item that shows the whole state, for late subscribers. */
  #last: Item | undefined;
  #endReason: StreamEndReason = 'shutdown';
  #done = false;

  constructor(options: SharedSubscriptionsOptions, forget: () => void) {
    this.#options = options;
    this.#forget = forget;
  }

  start(start: (sharedBy: SharedSource) => Promise<SourceStart<Item, Meta>>): void {
    const sharedBy: SharedSource = {
      opened: (field, { wholeStateEvents }) => {
        this.#field = field;
        this.#wholeStateEvents = wholeStateEvents;
      },
      ended: (reason) => {
        this.#endReason = reason;
      },
    };
    start(sharedBy).then(
      (started) => this.#started(started),
      (error: unknown) => {
        this.#finish();
        for (const member of this.#takeWaiting()) member.sink.fail(error);
      },
    );
  }

  join(subscriber: Subscriber, sink: SubscriptionSink<Item, Meta>): Admission {
    const member: Member<Item, Meta> = { subscriber, sink, admission: undefined, left: false };
    if (this.#source) this.#admit(member);
    else this.#waiting.push(member);
    return (reason) => this.#leave(member, reason);
  }

  #takeWaiting(): Member<Item, Meta>[] {
    const waiting = this.#waiting.filter((member) => !member.left);
    this.#waiting = [];
    return waiting;
  }

  #started(started: SourceStart<Item, Meta>): void {
    const waiting = this.#takeWaiting();
    if (started.kind === 'answer') {
      this.#finish();
      for (const member of waiting) member.sink.answer(started.answer);
      return;
    }
    if (this.#field === undefined) {
      // Not a subscription the registry admits: shared by nobody.
      this.#finish();
      const [first, ...others] = waiting;
      if (first) first.sink.alone(started);
      else started.stop();
      for (const member of others) member.sink.alone(undefined);
      return;
    }
    this.#source = started;
    for (const member of waiting) this.#admit(member);
    if (this.#members.size === 0) {
      this.#stop();
      return;
    }
    void this.#pump(started.items);
  }

  #admit(member: Member<Item, Meta>): void {
    const { meta } = this.#source as { meta: Meta };
    try {
      member.admission = this.#options.registry.admit(
        member.subscriber,
        this.#field as SubscriptionField,
      );
    } catch (error) {
      member.left = true;
      this.#options.metrics.error((error as GraphQLError).extensions?.code);
      member.sink.refuse(error as GraphQLError, meta);
      return;
    }
    this.#members.add(member);
    member.sink.begin(meta);
    if (this.#wholeStateEvents && this.#last !== undefined) member.sink.next(this.#last);
  }

  #leave(member: Member<Item, Meta>, reason: StreamEndReason): void {
    if (member.left) return;
    member.left = true;
    member.admission?.(reason);
    if (reason === 'slow') this.#options.metrics.error('SLOW_SUBSCRIBER');
    this.#members.delete(member);
    if (this.#source && this.#members.size === 0 && !this.#done) this.#stop();
  }

  /** Hands each item to every member, a batch a turn, then reads the next. */
  async #pump(items: AsyncIterator<Item>): Promise<void> {
    try {
      for (;;) {
        const result = await items.next();
        if (result.done || this.#done) break;
        const item = result.value;
        const event = this.#source?.isEvent(item) === true;
        if (event && this.#wholeStateEvents) this.#last = item;
        const started = performance.now();
        const members = [...this.#members];
        for (let i = 0; i < members.length; i += 1) {
          const member = members[i] as Member<Item, Meta>;
          if (!member.left) member.sink.next(item);
          if ((i + 1) % FAN_OUT_BATCH === 0 && i + 1 < members.length) await nextTurn();
        }
        if (event) {
          this.#options.metrics.subscriptionFannedOut(
            this.#field as SubscriptionField,
            (performance.now() - started) / 1000,
          );
        }
      }
    } catch {
      // The source failed: its subscribers end as at its end.
    }
    this.#end();
  }

  /** The source ended: so does every member's answer. */
  #end(): void {
    if (this.#done) return;
    this.#finish();
    for (const member of [...this.#members]) {
      member.left = true;
      member.admission?.(this.#endReason);
      member.sink.complete();
    }
    this.#members.clear();
  }

  /** Nobody listens: the source is let go (its stream then ends, and nobody hears it). */
  #stop(): void {
    this.#finish();
    this.#source?.stop();
  }

  /** From now on nobody joins this channel: a new subscriber starts another. */
  #finish(): void {
    this.#done = true;
    this.#last = undefined;
    this.#forget();
  }
}
