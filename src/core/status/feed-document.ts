import type { z } from 'zod';
import type { StatusChangeEvent } from './change-event.js';
import type { FeedDocuments, FeedPage } from './model.js';

/*
 * What a status provider is to the gateway: the documents of a page's feed, each declared as data
 * (where it is, what it must look like, how it becomes the domain model, what changes its loads
 * show). The generic feed (`upstreams/status-feed/`) caches, shares, polls and diffs whatever is
 * declared; a provider (`providers/<name>/`) knows its wire format, and nothing here does.
 */

export type FeedDocument = keyof FeedDocuments;

/** Each document of a page as it stands when one of them is loaded (absent: none loaded yet). */
export type FeedSnapshots = { readonly [Name in FeedDocument]?: FeedDocuments[Name] | undefined };

/**
 * A snapshot and what was left out of it: list items that failed validation are dropped one by
 * one, and each is described here so that the caller can log it.
 */
export interface Built<Snapshot> {
  readonly snapshot: Snapshot;
  readonly problems: readonly string[];
}

/** One document of a provider's feed: everything the generic feed needs to serve it. */
export interface DocumentDeclaration<Value, Wire = unknown> {
  /** Where it is, below the page's `baseUrl` (`/summary.json`); also its name among the replicas. */
  readonly path: string;
  /** What the upstream's answer must be; checked whole before it is built. */
  readonly schema: z.ZodType<Wire>;
  /** The domain's value of a checked answer, built once per fetch and shared by every reader. */
  build(wire: Wire, page: FeedPage): Built<Value>;
  /**
   * The changes between two successive loads (pure, given the page's other documents as they
   * stand); the events are checked on other replicas against the stored snapshot (`shownEvent`).
   * @default none: its loads tell subscribers nothing
   */
  changes?(
    previous: Value,
    next: Value,
    detectedAt: Date,
    others: FeedSnapshots,
  ): StatusChangeEvent[];
  /**
   * Whether a page may lack it (some hosts answer 404 for all but a provider's main document): its
   * failure is then kept for a TTL like a snapshot, so that asking for it costs no request each time.
   * @default false
   */
  readonly optional?: boolean;
}

/** A provider's documents, one declaration per document of the domain. */
export type FeedDocumentDeclarations = {
  readonly [Name in FeedDocument]: DocumentDeclaration<FeedDocuments[Name]>;
};

/** A status feed format: where a page's documents are, and each of them (`providers/<name>/`). */
export interface FeedProvider {
  /** What a page's `baseUrl` ends in (`/api/v2`): a URL without it is refused in the configuration. */
  readonly baseUrlPath: string;
  readonly documents: FeedDocumentDeclarations;
}

/**
 * A document's declaration, its schema and build checked against each other (what the
 * declarations' table, whose wire types differ, cannot check): `build` must take whatever
 * `schema` lets through.
 */
export const feedDocument = <Value, Wire>(
  declaration: DocumentDeclaration<Value, Wire> & {
    readonly build: (wire: Wire, page: FeedPage) => Built<Value>;
  },
): DocumentDeclaration<Value> => declaration;
