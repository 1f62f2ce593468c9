import type { FeedProvider } from '../core/status/feed-document.js';
import { STATUSPAGE_V2 } from './statuspage-v2/documents.js';

/**
 * Every status feed format a page may be read as, by the name its entry in `STATUS_PAGES_FILE`
 * gives (`provider`): each a folder beside this file.
 */
export const PROVIDERS = {
  'statuspage-v2': STATUSPAGE_V2,
} as const satisfies Readonly<Record<string, FeedProvider>>;

export type ProviderName = keyof typeof PROVIDERS;

export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [ProviderName, ...ProviderName[]];

/** The format of a page whose entry names none, and of `STATUS_BASE_URL`'s page. */
export const DEFAULT_PROVIDER: ProviderName = 'statuspage-v2';

/** The provider called `name`; the default one when none is named. */
export const providerOf = (name: ProviderName | undefined): FeedProvider =>
  PROVIDERS[name ?? DEFAULT_PROVIDER];
