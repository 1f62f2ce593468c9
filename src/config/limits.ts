import { z } from 'zod';
import { env, fraction, wholeNumber } from './variable.js';

export const Limits = z
  .object({
    bodiesHeapShare: env('REQUEST_BODIES_HEAP_SHARE', fraction, {
      default: '0.2',
      description:
        "Share of node's heap limit (`--max-old-space-size`) that the request bodies being handled may take together. Each counts, from before it is read to its answer, the most heap a JSON text of its declared `Content-Length` (or `MAX_BODY_BYTES` without one) may take: 6 times its bytes (the most an upload was measured to take at its peak while it is read, parsed, checked and sent on; `npm run bench:uploads`, docs/performance.md), or its text and every value it may hold at 67 bytes each (a text may hold `MAX_JSON_VALUES` values, and a short one only 4,096 or one per 8 bytes), whichever is more. One that would not fit is refused unread with 503 `SERVER_BUSY` (`TOO_MANY_UPLOADS` for a body above `MAX_BODY_BYTES`) and `Retry-After`. Under the Dockerfile's flags (a 280 MiB heap limit) it is 56 MiB: one upload of the largest size (8.25 MiB, 49.5 MiB counted), 21 bodies of 256 KiB, or about 4,000 of 200 bytes. With `SUBSCRIPTION_HEAP_LIMIT` (0.75) it stays under the limit.",
    }),
    maxBodyBytes: env('MAX_BODY_BYTES', wholeNumber(1), {
      default: '262144',
      description: 'Largest request body; larger gets 413 (declared or streamed).',
    }),
    maxDepth: env('MAX_DEPTH', wholeNumber(1), {
      default: '12',
      description: 'Selection depth, fragments flattened (the page tree needs 5).',
    }),
    maxAliases: env('MAX_ALIASES', wholeNumber(0), {
      default: '30',
      description: 'Aliases per operation.',
    }),
    maxCost: env('MAX_COST', wholeNumber(1), {
      default: '5000',
      description: 'Cost: 2 per object, 1 per scalar, ×1.5 per depth level.',
    }),
    maxTokens: env('MAX_TOKENS', wholeNumber(1), {
      default: '2000',
      description: 'Tokens in the document, counted while parsing.',
    }),
    maxResolvedFields: env('MAX_RESOLVED_FIELDS', wholeNumber(1), {
      default: '20000',
      description:
        'Fields one operation may resolve, every list item counted: bounds what nested lists multiply to. The page tree resolves 774 on a 66-component page and 4,651 on a 500-component one.',
    }),
    maxAnswerBytes: env('MAX_ANSWER_BYTES', wholeNumber(1), {
      default: '5000000',
      description:
        'Characters of text one answer may carry (string fields added up); past it the operation answers one error and no data. The whole page tree of a 500-component page is a 100 KB answer.',
    }),
    maxExecutionMs: env('MAX_EXECUTION_MS', wholeNumber(1), {
      default: '30000',
      description:
        'Time one operation may spend executing, checked as each field starts: past it the operation answers one error and no data. It must exceed `VERIFY_WAIT_MS`, which a `verifyContract` may wait.',
    }),
    maxPagesPerOperation: env('MAX_PAGES_PER_OPERATION', wholeNumber(1), {
      default: '50',
      description:
        "Status pages one operation may read, counted once across its aliases, fields and fragments (`statusPage`, `statusPages`, `statusOverview`, the Chain status fields, `_entities`, subscriptions' `slugs`): more is refused with `BAD_USER_INPUT` and `extensions.limit` before any page is fetched. Each page read may cost an upstream request per feed document.",
    }),
    maxEntityRepresentations: env('MAX_ENTITY_REPRESENTATIONS', wholeNumber(1), {
      default: '200',
      description:
        'Representations one `_entities` call may resolve; more is refused before any upstream is asked.',
    }),
    maxDirectives: env('MAX_DIRECTIVES', wholeNumber(0), {
      default: '20',
      description: 'Directives per operation.',
    }),
    json: z.object({
      maxValues: env('MAX_JSON_VALUES', wholeNumber(1), {
        default: '100000',
        description:
          "JSON values one request body, GET parameter or WebSocket message may hold, counted as its `{`, `[`, `,` and `:` outside strings before it is parsed; more is refused with 413 `JSON_TOO_COMPLEX`, unparsed. Bytes alone do not bound what a body parses into: 8 MiB of `[{},…]` is 2.8 million objects, 179 MiB of heap; a value counted here is at most 67 bytes once parsed (an empty object), so the default bounds a parse to about 6.4 MiB besides its strings. Real inputs are long strings and few values: a verification of an 8 MiB standard JSON input of 487 sources counts 2,002, the largest metadata.json among Sourcify's test fixtures (49 KB, with its ABI) 2,197.",
      }),
      maxDepth: env('MAX_JSON_DEPTH', wholeNumber(1, 10_000), {
        default: '64',
        description:
          'Objects and arrays one request body, GET parameter or WebSocket message may nest inside one another, counted before it is parsed; deeper is refused with 413 `JSON_TOO_COMPLEX`. A verification of a standard JSON input nests 8 deep (its `outputSelection`), of a metadata.json with tuples in its ABI about 13.',
      }),
    }),
  })
  .meta({ title: 'Limits' });
