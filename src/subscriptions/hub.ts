import { hash } from 'node:crypto';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { GraphQLError } from 'graphql';
import type { ChangeBus } from '../core/status/change-bus.js';
import { pageSlugOf, type StatusChangeEvent } from '../core/status/change-event.js';
import { pagesChanged, sinceUnknown, slowSubscriber } from '../errors/subscription-error.js';
import type { FeedDocument } from '../upstreams/status-feed/status-feed.js';
import type {
  Admission,
  EndReason,
  PagesEndReason,
  Release,
  Subscriber,
  SubscriptionField,
  SubscriptionMetrics,
} from './admission.js';
import type { ChangeLog } from './change-log.js';

/**
 * What a subscription's executor reads: a change; the state of a page as it stands (what a
 * whole-state subscription begins with); a value of a stream of its own (a job's states); or the
 * error it ends with (`end`), or that it only tells (`notice`).
 */
export type HubItem =
  | { readonly kind: 'change'; readonly event: StatusChangeEvent }
  | { readonly kind: 'state'; readonly pageSlug: string }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'end' | 'notice'; readonly error: GraphQLError };

/** The change an item carries, or the error its subscription ends with (or tells). */
export function changeOf<Event extends StatusChangeEvent>(item: HubItem): Event {
  if (item.kind === 'end' || item.kind === 'notice') throw item.error;
  if (item.kind !== 'change') throw new TypeError(`not a change: ${item.kind}`);
  return item.event as Event;
}

/** The page an item of a whole-page subscription shows. */
export const pageOf = (item: HubItem): string =>
  item.kind === 'state' ? item.pageSlug : pageSlugOf(changeOf(item));

/** The state an item of a stream of its own carries (a job's). */
export function jobStateOf(item: HubItem): unknown {
  if (item.kind === 'value') return item.value;
  return changeOf(item);
}

/** A subscription's argument `since`: the time, and how the operation gave it. */
export interface Since {
  readonly at: number | undefined;
  /** The variable that holds it (those subscribers share a topic whatever its value), if one does. */
  readonly variable: string | undefined;
}

/** A subscription, as its field's `subscribe` opens it (`context.openSubscription`). */
export interface SubscriptionRequest {
  readonly field: SubscriptionField;
  /** The pages it follows: it hears of their changes only, and has them polled. */
  readonly pages: readonly string[];
  /** The feed documents whose changes it needs polled. */
  readonly documents: readonly FeedDocument[];
  /** The changes of its pages it wants. */
  readonly accept?: (event: StatusChangeEvent) => boolean;
  /** It begins with each page's state, and every item shows a whole page: late joiners get the last. */
  readonly wholeState?: boolean;
  /** Its items come from there instead, each the whole state (a job's). */
  readonly values?: AsyncIterator<unknown>;
  readonly since?: Since;
  /** Called right before each item is handed to the executor (fresh per-item loaders). */
  readonly beforeEach?: () => void;
}

/** What a topic's source made of one item: its result's JSON text (and SSE frame, once made). */
export interface Payload {
  readonly json: string;
  sse?: Buffer;
  variants?: Map<string, Payload>;
}

/** A source that started a stream: its payloads (`null`: a keep-alive), until it ends. */
export interface SourceStream {
  readonly kind: 'stream';
  readonly payloads: AsyncIterator<Payload | null>;
  /** What a transport needs to begin each subscriber's answer (an SSE answer's headers). */
  readonly head: unknown;
  /** Lets go of the source: nobody listens any more. */
  readonly stop: () => void;
}

/** What a topic's source produced: a stream, or one answer (its errors, a query's result). */
export type SourceStart = SourceStream | { readonly kind: 'answer'; readonly answer: unknown };

/** One subscriber of a topic, as its transport writes to it. */
export interface Sink {
  /** Let in: begin the answer. Before any payload. */
  begin(head: unknown): void;
  /** The next payload; a sink whose client falls too far behind leaves (`slow`). */
  next(payload: Payload): void;
  /** A keep-alive of the source. */
  ping(): void;
  /** The subscription ended. */
  complete(): void;
  /** Not let in (`TOO_MANY_SUBSCRIPTIONS`). */
  refuse(error: GraphQLError, head: unknown): void;
  /** The operation answered without a stream. */
  answer(answer: unknown): void;
  /**
   * Not a subscription a crowd may share (it opened none: a query, a mutation, an error): the
   * first subscriber gets the source's own stream, the others run the operation on their own.
   */
  alone(own: SourceStream | undefined): void;
  /** Starting the source failed. */
  fail(error: unknown): void;
}

/** The parameters of a GraphQL request: what its topic is decided by. */
export interface OperationParams {
  readonly query?: unknown;
  readonly documentId?: unknown;
  readonly operationName?: unknown;
  readonly variables?: unknown;
  readonly extensions?: unknown;
}

export interface Join {
  readonly params: OperationParams | undefined;
  /** The verification session cookie, the one thing of a request a resolver reads besides it. */
  readonly session: string | undefined;
  readonly subscriber: Subscriber;
  readonly sink: Sink;
  /** Not to be shared: it runs a topic of its own (another request of it could not be shared). */
  readonly alone?: boolean;
  /** Runs the topic's source, `topic` in the request's server context (`openSubscription`). */
  readonly start: (topic: Topic) => Promise<SourceStart>;
}

export interface HubOptions {
  readonly bus: ChangeBus;
  readonly admission: Admission;
  readonly log: ChangeLog;
  /** When page `slug`'s current summary was fetched (its `fetchedAt`), if it has one. */
  readonly snapshotAt: (slug: string) => number | undefined;
  /** Items one source may have waiting (`SUBSCRIPTION_BACKLOG`). */
  readonly backlog: number;
  readonly metrics: SubscriptionMetrics;
}

/** Sinks written to in one turn of the event loop: the fan-out lets other work through. */
const FAN_OUT_BATCH = 64;
/** The pause between two batches of keep-alives: 6,400 a second a topic at most. */
const PING_BATCH_GAP_MS = 10;
/** A request key up to this size is its own key; a longer one is its SHA-256. */
const LARGEST_LITERAL_KEY = 256;
/** Documents whose `since` variable is remembered. */
const MAX_DOCUMENTS = 1_000;
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

/**
 * Every subscription of this replica, on every transport. Subscribers of the same operation (its
 * document, operation name and variables, `since` aside, and the verification session: `keyOf`)
 * share one topic: one source, run through Yoga's whole pipeline with the first one's request and
 * fed by the change bus, one execution per item, its payload written to every sink as it is, 64
 * a turn. Each sink is let in by the `Admission`; a late joiner of a whole-state topic starts with
 * the last state of each of its pages; one with `since` with every change found after it (the
 * `ChangeLog`). What cannot be shared (it opens no subscription) serves its first joiner only;
 * what Yoga serves itself (multipart) is a subscription of its own, admitted here too.
 */
export class SubscriptionHub {
  readonly #options: HubOptions;
  readonly #topics = new Map<string, Topic>();
  /** Every open feed, with the pages it follows. */
  readonly #feeds = new Map<Feed, { pages: ReadonlySet<string>; topic: Topic | undefined }>();
  /** The feeds that follow each page, with the changes they want. */
  readonly #routes = new Map<string, Map<Feed, Route>>();
  /** The variable that holds `since`, by document (null: none). */
  readonly #sinceVariables = new Map<string, string | null>();
  readonly #unsubscribe: () => void;
  #unique = 0;
  #closed = false;

  constructor(options: HubOptions) {
    this.#options = options;
    this.#unsubscribe = options.bus.subscribe((event) => {
      options.metrics.statusChange(event.type);
      options.log.record(event);
      for (const [feed, { accept, topic }] of this.#routes.get(pageSlugOf(event)) ?? []) {
        if (!accept(event)) continue;
        topic?.inFlight.add(event);
        feed.push({ kind: 'change', event });
      }
    });
  }

  /** The document a request runs, with its operation: undefined when it names none. */
  #documentOf(params: OperationParams): string | undefined {
    const { query, documentId, operationName, extensions } = params;
    const hashed = (extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)
      ?.persistedQuery?.sha256Hash;
    const document =
      typeof query === 'string' && query !== ''
        ? `q:${query}`
        : typeof documentId === 'string'
          ? `id:${documentId}`
          : typeof hashed === 'string'
            ? `apq:${hashed}`
            : undefined;
    if (document === undefined) return undefined;
    return digest(`${document}\n${typeof operationName === 'string' ? operationName : ''}`);
  }

  /**
   * The topic of a request: its document and operation, its variables but the one that holds
   * `since`, and its verification session (no subscription reads it today; one that did would
   * answer each session its own). A request without a document runs alone.
   */
  #keyOf(params: OperationParams | undefined, session: string | undefined): string {
    const document = params && this.#documentOf(params);
    if (document === undefined) return `#${this.#unique++}`;
    let variables = params?.variables ?? {};
    const since = this.#sinceVariables.get(document);
    const value = since ? (variables as Record<string, unknown>)[since] : undefined;
    if (typeof value === 'string' && DATE_TIME.test(value)) {
      variables = { ...(variables as object), [since as string]: undefined };
    }
    return digest(`${document}\n${JSON.stringify(variables)}\n${session ?? ''}`);
  }

  /** Joins a subscriber to its topic, starting the topic's source when there is none. */
  join(join: Join): (reason: EndReason) => void {
    const key = join.alone ? `#${this.#unique++}` : this.#keyOf(join.params, join.session);
    let topic = this.#topics.get(key);
    if (!topic || topic.done) {
      topic = new Topic(key, join.params && this.#documentOf(join.params));
      this.#topics.set(key, topic);
      this.#start(topic, join.start);
    }
    const member: Member = {
      sink: join.sink,
      subscriber: join.subscriber,
      params: join.params,
      session: join.session,
      fromSeq: 0,
      left: false,
    };
    if (topic.source) this.#admit(topic, member);
    else topic.waiting.push(member);
    const joined = topic;
    return (reason) => this.#leave(joined, member, reason);
  }

  #start(topic: Topic, start: (topic: Topic) => Promise<SourceStart>): void {
    start(topic).then(
      (started) => this.#started(topic, started),
      (error: unknown) => {
        this.#finish(topic);
        topic.feed?.end('complete');
        for (const member of topic.takeWaiting()) member.sink.fail(error);
      },
    );
  }

  #started(topic: Topic, started: SourceStart): void {
    const waiting = topic.takeWaiting();
    if (started.kind === 'answer') {
      this.#finish(topic);
      // Yoga answered without its stream: nobody reads what it opened.
      topic.feed?.end('complete');
      for (const member of waiting) member.sink.answer(started.answer);
      return;
    }
    if (!topic.opened) {
      this.#finish(topic);
      const [first, ...others] = waiting;
      if (first) first.sink.alone(started);
      else started.stop();
      for (const member of others) member.sink.alone(undefined);
      return;
    }
    topic.source = started;
    // Its `since` variable is known now: those who send another value join it too.
    const first = waiting[0];
    const alias = first && this.#keyOf(first.params, first.session);
    if (alias && !this.#topics.has(alias)) {
      this.#topics.set(alias, topic);
      topic.keys.push(alias);
    }
    for (const member of waiting) this.#admit(topic, member);
    if (topic.members.size === 0) this.#stop(topic);
    else void this.#pump(topic, started);
  }

  #admit(topic: Topic, member: Member): void {
    const { admission, metrics, log } = this.#options;
    const opened = topic.opened as Opened;
    const source = topic.source as SourceStream;
    const feed = topic.feed as Feed;
    try {
      member.release = admission.admit(member.subscriber, opened.field);
    } catch (error) {
      member.left = true;
      metrics.error((error as GraphQLError).extensions?.code);
      member.sink.refuse(error as GraphQLError, source.head);
      return;
    }
    topic.members.add(member);
    member.sink.begin(source.head);
    const since = opened.wholeState ? undefined : this.#sinceOf(topic, member);
    // What it was joined by is no longer needed: an idle subscriber holds its sink and little else.
    member.params = undefined;
    if (opened.wholeState) {
      for (const page of opened.pages.length > 0 ? opened.pages : ['']) {
        const last = topic.last.get(page);
        if (last) member.sink.next(last);
      }
      return;
    }
    member.fromSeq = feed.pushed;
    const startsAfter = this.#startsAfter(opened.pages);
    if (since === undefined) {
      member.marker = markerOf(startsAfter);
      return;
    }
    const changes = log.since(opened.pages, since);
    if (!changes.known) {
      member.sink.next(notice(sinceUnknown(since, changes.knownSince), startsAfter));
      return;
    }
    member.marker = markerOf(since);
    const wanted = changes.events.filter(opened.accept);
    // From now on its changes' payloads are kept while the log keeps them, for the next such one.
    topic.catchesUp = true;
    if (wanted.length === 0) return;
    member.catchUp = wanted.map((event) => topic.payloads.get(event) ?? event);
    for (const event of wanted) {
      if (topic.payloads.has(event)) continue;
      if (!topic.inFlight.has(event)) {
        topic.inFlight.add(event);
        feed.push({ kind: 'change', event }, { replay: true });
      }
      const waiting = topic.waitingFor.get(event) ?? new Set<Member>();
      waiting.add(member);
      topic.waitingFor.set(event, waiting);
    }
    this.#flush(topic, member);
  }

  /** The `since` of a member: the value of the variable its document gives it in, if valid. */
  #sinceOf(topic: Topic, member: Member): number | undefined {
    const variable = topic.opened?.since?.variable;
    if (variable === undefined) return topic.opened?.since?.at;
    const value = (member.params?.variables as Record<string, unknown> | undefined)?.[variable];
    return typeof value === 'string' && DATE_TIME.test(value) ? Date.parse(value) : undefined;
  }

  /** The time after which a subscriber joining now hears of every change of `pages`. */
  #startsAfter(pages: readonly string[]): number {
    let after = 0;
    for (const slug of pages) {
      after = Math.max(after, this.#options.snapshotAt(slug) ?? 0, this.#options.log.latest(slug));
    }
    return after > 0 ? after : Date.now();
  }

  /** Writes `payload` to `member`, with its marker if it is the first it gets. */
  #write(member: Member, payload: Payload): void {
    const marker = member.marker;
    if (marker === undefined) {
      member.sink.next(payload);
      return;
    }
    member.marker = undefined;
    payload.variants ??= new Map();
    let variant = payload.variants.get(marker);
    if (!variant) {
      variant = { json: withExtension(payload.json, marker) };
      payload.variants.set(marker, variant);
    }
    member.sink.next(variant);
  }

  /** Writes what a member catching up has, in order, until the first it still waits for. */
  #flush(topic: Topic, member: Member): void {
    const catchUp = member.catchUp as (Payload | StatusChangeEvent)[];
    while (catchUp.length > 0 && !member.left) {
      const first = catchUp[0] as Payload | StatusChangeEvent;
      const payload = 'json' in first ? first : topic.payloads.get(first);
      if (!payload) return;
      catchUp.shift();
      this.#write(member, payload);
    }
    member.catchUp = undefined;
  }

  /** Hands each payload of the source to its sinks, a batch a turn, then reads the next. */
  async #pump(topic: Topic, source: SourceStream): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await source.payloads.next();
        if (done || topic.done) break;
        await this.#deliver(topic, value);
      }
    } catch {
      // The source failed: its subscribers end as at its end.
    }
    this.#end(topic);
  }

  async #deliver(topic: Topic, payload: Payload | null): Promise<void> {
    if (payload === null) {
      void this.#ping(topic);
      return;
    }
    const opened = topic.opened as Opened;
    const taken = payload ? topic.taken.shift() : undefined;
    const item = taken?.item;
    if (item?.kind === 'state' || item?.kind === 'value')
      topic.last.set(pageOrNone(item), payload as Payload);
    if (item?.kind === 'change') {
      if (opened.wholeState) topic.last.set(pageSlugOf(item.event), payload as Payload);
      topic.inFlight.delete(item.event);
      const waiting = topic.waitingFor.get(item.event);
      if (topic.catchesUp || waiting) topic.payloads.set(item.event, payload as Payload);
      topic.waitingFor.delete(item.event);
      for (const member of waiting ?? []) if (member.catchUp) this.#flush(topic, member);
    }
    if (taken?.replay) return;
    const started = performance.now();
    const members = [...topic.members];
    for (let i = 0; i < members.length; i += 1) {
      const member = members[i] as Member;
      if (member.left || (taken && taken.seq < member.fromSeq)) continue;
      if (member.catchUp) member.catchUp.push(payload as Payload);
      else this.#write(member, payload as Payload);
      if ((i + 1) % FAN_OUT_BATCH === 0 && i + 1 < members.length) await nextTurn();
    }
    this.#options.metrics.subscriptionFannedOut(opened.field, (performance.now() - started) / 1000);
  }

  /**
   * Passes the source's keep-alive on to every member, a batch every `PING_BATCH_GAP_MS`, beside
   * the payloads rather than in their way: at 16,700 SSE members a worker, pinging all at once took
   * about a second of writes every 12 s, which a change found meanwhile waited behind, and
   * cached queries with it. A round still under way when the next keep-alive comes is enough.
   */
  async #ping(topic: Topic): Promise<void> {
    if (topic.pinging) return;
    topic.pinging = true;
    try {
      const members = [...topic.members];
      for (let i = 0; i < members.length && !topic.done; i += 1) {
        const member = members[i] as Member;
        if (!member.left) member.sink.ping();
        if ((i + 1) % FAN_OUT_BATCH === 0) await sleep(PING_BATCH_GAP_MS);
      }
    } finally {
      topic.pinging = false;
    }
  }

  #leave(topic: Topic, member: Member, reason: EndReason): void {
    if (member.left) return;
    member.left = true;
    member.release?.(reason);
    topic.members.delete(member);
    if (topic.source && topic.members.size === 0 && !topic.done) this.#stop(topic);
  }

  /** The source ended: so does every member's answer. */
  #end(topic: Topic): void {
    if (topic.done && topic.members.size === 0) return;
    this.#finish(topic);
    for (const member of [...topic.members]) {
      member.left = true;
      member.release?.(topic.endReason);
      member.sink.complete();
    }
    topic.members.clear();
  }

  /**
   * Nobody listens: the source is let go, and its pages with it at once (Yoga's stream ends a turn
   * or more later: until then the page would still be polled for nobody).
   */
  #stop(topic: Topic): void {
    this.#finish(topic);
    topic.feed?.end('client');
    topic.source?.stop();
  }

  /** From now on nobody joins this topic: a new subscriber starts another. */
  #finish(topic: Topic): void {
    topic.done = true;
    topic.last.clear();
    for (const key of topic.keys) if (this.#topics.get(key) === topic) this.#topics.delete(key);
  }

  /**
   * Opens a subscription: the source of `topic` (its first joiner's request running through Yoga),
   * or one Yoga serves itself for `subscriber` (multipart), admitted here and ended when `signal`
   * aborts. Throws `TOO_MANY_SUBSCRIPTIONS` when it cannot be let in.
   */
  open(
    request: SubscriptionRequest,
    via:
      | { readonly topic: Topic }
      | { readonly subscriber: Subscriber; readonly signal?: AbortSignal },
  ): AsyncIterableIterator<HubItem> {
    const { admission, backlog, metrics, log } = this.#options;
    const topic = 'topic' in via ? via.topic : undefined;
    const subscriber =
      topic?.waiting[0]?.subscriber ?? ('subscriber' in via ? via.subscriber : undefined);
    const who = subscriber ?? { requestId: '', transport: 'http', clientAddress: '' };
    const unfollow = admission.follow(who, request.field, request.pages, request.documents);
    let release: Release | undefined;
    if (!topic) {
      try {
        release = admission.admit(who, request.field);
      } catch (error) {
        unfollow();
        throw error;
      }
    }
    const pages = new Set(request.pages);
    const feed: Feed = new Feed({
      backlog,
      beforeEach: request.beforeEach,
      onTake: (taken) => {
        metrics.subscriptionExecuted(request.field);
        topic?.taken.push(taken);
      },
      onEnd: (reason) => {
        this.#feeds.delete(feed);
        for (const slug of pages) this.#routes.get(slug)?.delete(feed);
        unfollow();
        release?.(reason);
        void request.values?.return?.();
        if (topic) topic.endReason = reason;
      },
    });
    this.#feeds.set(feed, { pages, topic });
    const accept = request.accept ?? ((event) => event.type === 'page');
    for (const slug of pages) {
      const routes = this.#routes.get(slug) ?? new Map<Feed, Route>();
      routes.set(feed, { accept, topic });
      this.#routes.set(slug, routes);
    }
    if (topic) {
      topic.opened = {
        ...request,
        accept,
        wholeState: request.wholeState === true || !!request.values,
      };
      topic.feed = feed;
      if (topic.document !== undefined) {
        if (this.#sinceVariables.size >= MAX_DOCUMENTS) this.#sinceVariables.clear();
        this.#sinceVariables.set(topic.document, request.since?.variable ?? null);
      }
    }
    if ('signal' in via && via.signal) {
      if (via.signal.aborted) feed.end('client');
      else via.signal.addEventListener('abort', () => feed.end('client'), { once: true });
    }
    if (request.wholeState) {
      for (const slug of request.pages) feed.push({ kind: 'state', pageSlug: slug });
    } else if (!topic && request.since?.at !== undefined) {
      const changes = log.since(request.pages, request.since.at);
      if (!changes.known) {
        feed.push({ kind: 'notice', error: sinceUnknown(request.since.at, changes.knownSince) });
      } else {
        for (const event of changes.events) {
          if (accept(event)) feed.push({ kind: 'change', event }, { replay: true });
        }
      }
    }
    if (request.values) void this.#pull(feed, request.values);
    if (this.#closed) feed.end('shutdown');
    return feed;
  }

  /** Feeds `feed` the values of a stream of its own, then completes it. */
  async #pull(feed: Feed, values: AsyncIterator<unknown>): Promise<void> {
    try {
      for (let next = await values.next(); !next.done; next = await values.next()) {
        feed.push({ kind: 'value', value: next.value });
      }
    } catch {
      // Its failure ends the subscription, as its end does.
    }
    feed.end('complete');
  }

  /**
   * Ends every subscription that follows any of `slugs` (pages a reload removed, or whose feed it
   * changed) with an error that says so and names them, then `complete`: its client subscribes
   * again to the pages configured now. Returns how many subscribers that ends.
   */
  endFollowing(slugs: Iterable<string>, reason: PagesEndReason): number {
    const gone = new Set(slugs);
    let ended = 0;
    for (const [feed, { pages, topic }] of [...this.#feeds]) {
      const named = [...pages].filter((slug) => gone.has(slug));
      if (named.length === 0) continue;
      feed.endWith({ kind: 'end', error: pagesChanged(reason, named) }, reason);
      ended += topic ? topic.members.size : 1;
    }
    return ended;
  }

  /** Completes every open subscription (each client gets its events so far) and every later one. */
  endAll(): void {
    this.#closed = true;
    for (const feed of [...this.#feeds.keys()]) feed.end('shutdown');
  }

  /** Ends everything and stops listening to the bus. */
  close(): void {
    this.endAll();
    this.#unsubscribe();
  }
}

const digest = (text: string) =>
  text.length <= LARGEST_LITERAL_KEY ? `=${text}` : `#${hash('sha256', text, 'base64url')}`;

const pageOrNone = (item: HubItem) => (item.kind === 'state' ? item.pageSlug : '');

/** What the first payload a subscriber gets says of where it starts: every change after this. */
const markerOf = (after: number) => JSON.stringify({ since: new Date(after).toISOString() });

/** A payload with `extensions` of its own, for one subscriber: an error it is only told. */
function notice(error: GraphQLError, startsAfter: number): Payload {
  return {
    json: withExtension(JSON.stringify({ errors: [error.toJSON()] }), markerOf(startsAfter)),
  };
}

/** `json`, a result's text, with `extensions` (an object's text) merged into its own. */
function withExtension(json: string, extensions: string): string {
  if (!json.includes('"extensions"')) return `${json.slice(0, -1)},"extensions":${extensions}}`;
  const result = JSON.parse(json) as { extensions?: object };
  return JSON.stringify({
    ...result,
    extensions: { ...result.extensions, ...JSON.parse(extensions) },
  });
}

interface Opened extends SubscriptionRequest {
  readonly accept: (event: StatusChangeEvent) => boolean;
  readonly wholeState: boolean;
}

/** Where a page's changes go: a feed, with the changes it wants (and its topic, if it has one). */
interface Route {
  readonly accept: (event: StatusChangeEvent) => boolean;
  readonly topic: Topic | undefined;
}

interface Member {
  readonly sink: Sink;
  readonly subscriber: Subscriber;
  /** Its request's parameters until it is let in: its `since`. */
  params: OperationParams | undefined;
  readonly session: string | undefined;
  release?: Release;
  /** Payloads of items pushed before it joined are not its own (it has the state they show). */
  fromSeq: number;
  /** The changes it catches up with (their payloads once made), before anything else. */
  catchUp?: (Payload | StatusChangeEvent)[] | undefined;
  /** `extensions` for the first payload it gets. */
  marker?: string | undefined;
  left: boolean;
}

/** An item handed to the executor, whose payload comes next. */
interface Taken {
  readonly item: HubItem;
  readonly seq: number;
  /** Made for those catching up only. */
  readonly replay: boolean;
}

/** One topic: its source, its members, what late members start with. */
export class Topic {
  readonly keys: string[];
  waiting: Member[] = [];
  readonly members = new Set<Member>();
  opened: Opened | undefined;
  feed: Feed | undefined;
  source: SourceStream | undefined;
  /** Items handed to the executor, oldest first, awaiting their payload. */
  readonly taken: Taken[] = [];
  /** The last payload of each page (whole-state topics). */
  readonly last = new Map<string, Payload>();
  /** Each change's payload, while the change is kept (for those catching up). */
  readonly payloads = new WeakMap<StatusChangeEvent, Payload>();
  /** Whether a member caught up with changes: their payloads are kept from then on. */
  catchesUp = false;
  readonly inFlight = new Set<StatusChangeEvent>();
  readonly waitingFor = new Map<StatusChangeEvent, Set<Member>>();
  endReason: EndReason = 'complete';
  done = false;
  /** A round of keep-alives is under way. */
  pinging = false;

  constructor(
    key: string,
    readonly document: string | undefined,
  ) {
    this.keys = [key];
  }

  takeWaiting(): Member[] {
    const waiting = this.waiting.filter((member) => !member.left);
    this.waiting = [];
    return waiting;
  }
}

interface FeedOptions {
  readonly backlog: number;
  readonly beforeEach: (() => void) | undefined;
  readonly onTake: (taken: Taken) => void;
  readonly onEnd: (reason: EndReason) => void;
}

/**
 * One subscription's items, read by the GraphQL executor. Unlike an async generator, it ends at
 * once when its reader lets go (`return`) or the hub ends it, even while a read is waiting.
 */
class Feed implements AsyncIterableIterator<HubItem> {
  readonly #options: FeedOptions;
  readonly #queue: Taken[] = [];
  #waiting: ((result: IteratorResult<HubItem>) => void) | undefined;
  #ended = false;
  /** Items pushed so far: the next one's sequence number. */
  pushed = 0;

  constructor(options: FeedOptions) {
    this.#options = options;
  }

  /**
   * Queues `item`: past `backlog` live items waiting, the feed ends with `SLOW_SUBSCRIBER`. A
   * page's state or change waiting already stands for a new one of the same page.
   */
  push(item: HubItem, { replay = false } = {}): void {
    if (this.#ended) return;
    const taken: Taken = { item, seq: this.pushed++, replay };
    if (this.#waiting) {
      this.#hand(taken);
      return;
    }
    const page = wholePage(item);
    if (page !== undefined && this.#queue.some((queued) => wholePage(queued.item) === page)) return;
    if (!replay && this.#queue.length >= this.#options.backlog) {
      const error = slowSubscriber('SUBSCRIPTION_BACKLOG', this.#options.backlog);
      this.endWith({ kind: 'end', error }, 'slow');
      return;
    }
    this.#queue.push(taken);
  }

  #hand(taken: Taken): void {
    const waiting = this.#waiting as (result: IteratorResult<HubItem>) => void;
    this.#waiting = undefined;
    this.#options.beforeEach?.();
    this.#options.onTake(taken);
    waiting({ value: taken.item, done: false });
  }

  /** Completes the feed with `last` as its last item (what tells the client why). */
  endWith(last: HubItem, reason: EndReason): void {
    if (this.#ended) return;
    // Whoever is a member when it comes gets it.
    const taken: Taken = { item: last, seq: Number.POSITIVE_INFINITY, replay: false };
    if (this.#waiting) this.#hand(taken);
    else this.#queue.splice(0, this.#queue.length, taken);
    this.end(reason);
  }

  next(): Promise<IteratorResult<HubItem>> {
    const taken = this.#queue.shift();
    if (!taken && this.#ended) return Promise.resolve({ value: undefined, done: true });
    this.#options.beforeEach?.();
    if (!taken) return new Promise((resolve) => (this.#waiting = resolve));
    this.#options.onTake(taken);
    return Promise.resolve({ value: taken.item, done: false });
  }

  /** The reader is done (the client unsubscribed or went away). */
  return(): Promise<IteratorResult<HubItem>> {
    this.#queue.length = 0;
    this.end('client');
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Completes the feed, once: what is queued is still read, then it is done. */
  end(reason: EndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#options.onEnd(reason);
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** The page an item shows whole (a state, or a change of the page as a whole). */
const wholePage = (item: HubItem) =>
  item.kind === 'state'
    ? item.pageSlug
    : item.kind === 'change' && item.event.type === 'page'
      ? item.event.pageSlug
      : undefined;
