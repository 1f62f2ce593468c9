/**
 * Every `extensions.code` the gateway answers, with what it means for the client. Nothing else
 * writes a code: request-level refusals (`refusal`, `rawRefusal`), expected errors
 * (`ExpectedError`) and every other error (`codedError`) take theirs from here, typed `ErrorCode`
 * (test/architecture/error-codes.test.ts refuses a code written as a literal elsewhere), and
 * docs/api.md lists them from here.
 */
export const ERROR_CODES = {
  BAD_REQUEST:
    "The HTTP request is not a GraphQL request the gateway can read: a body that is not a JSON object, a batch, a bad `variables` parameter, a malformed `documentId` or persisted query hash, an invalid Host header, or bytes node's HTTP parser refuses (431 for a URL and headers past its limit: send the operation in a POST body).",
  NOT_FOUND:
    'Nothing is served at this path for this request: a status page webhook (`POST /webhooks/statuspage/<slug>/<token>`) whose page is not configured, has no `webhookToken`, or whose token is wrong or missing (404, the same for each, and nothing is fetched).',
  METHOD_NOT_ALLOWED:
    'The path is served for other HTTP methods only (405, with `Allow`): a status page webhook takes POST.',
  PERSISTED_QUERY_NOT_FOUND:
    'The `documentId` (or APQ `sha256Hash`) names no persisted document: use an id of persisted-documents.json, or (APQ) send the query with its hash to register it.',
  PERSISTED_DOCUMENT_REQUIRED:
    'The gateway runs persisted documents only (`PERSISTED_DOCUMENTS_ONLY`): send the `documentId` of a document in its manifest.',
  CSRF_BLOCKED:
    'A POST a browser could send cross-site without a preflight (a form, `text/plain`); send JSON with `Content-Type: application/json`.',
  PAYLOAD_TOO_LARGE:
    "The request body (a status page webhook's too) is larger than `MAX_BODY_BYTES`.",
  JSON_TOO_COMPLEX:
    'The request body, a GET `variables` or `extensions` parameter, or a WebSocket message holds more JSON values than `MAX_JSON_VALUES`, or nests objects and arrays deeper than `MAX_JSON_DEPTH`; `extensions.limit` names which. Refused with 413 before it was parsed (a WebSocket is closed with 4400). A real input, even megabytes of sources, is far from both: its sources are long strings.',
  REQUEST_TIMEOUT: 'The request, its headers or its body, did not arrive in time.',
  GRAPHQL_PARSE_FAILED:
    'The document is not GraphQL (the message gives the line and column of the first mistake); nothing ran.',
  GRAPHQL_VALIDATION_FAILED:
    "The document does not fit the schema: a field or type it does not have, a required argument left out, a variable used where its type does not fit; the message names it (with `INTROSPECTION` off, without suggesting the schema's names). Nothing ran.",
  OPERATION_RESOLUTION_FAILURE:
    'The document holds several operations and `operationName` names none of them, or an operation it does not hold (400); nothing ran.',
  BAD_USER_INPUT:
    'An argument was refused (`extensions.field` names it), a variable is missing or not of its type (400, `extensions.variable` names it), or the operation is over a limit (depth, aliases, cost, tokens, directives).',
  INPUT_TOO_LARGE:
    "A verification's source input (`stdJsonInput`, or `metadata` and `sources`) is larger than `VERIFY_MAX_SOURCE_BYTES`; nothing was sent to the service. Returned as `InvalidInputError` with `field` and `maxBytes`.",
  TOO_MANY_UPLOADS:
    'A request body above `MAX_BODY_BYTES` (a source verification) was refused with 503 before it was read: the ones being handled already are `VERIFY_MAX_CONCURRENT_UPLOADS`, or the request bodies being handled take the heap `REQUEST_BODIES_HEAP_SHARE` sets aside for them; `extensions.limit` names which. Retry shortly (`Retry-After`).',
  SERVER_BUSY:
    'The request was refused with 503 before its body was read: the request bodies being handled already take the heap `REQUEST_BODIES_HEAP_SHARE` sets aside for them (`extensions.limit`). Retry shortly (`Retry-After`).',
  UPSTREAM_UNAVAILABLE:
    'An upstream could not be reached, timed out, answered an error status, or its circuit is open.',
  UPSTREAM_BAD_RESPONSE: 'An upstream answered a body that is not what its endpoint serves.',
  VERIFICATION_REJECTED:
    'The verification service refused the request, or the verification failed.',
  RATE_LIMITED:
    'The verification service, or the explorer behind it, is limiting requests; or this client has started as many verifications as `VERIFY_RATE_LIMIT` allows (a request body above `MAX_BODY_BYTES` is then refused with 429 and `Retry-After` before it is read).',
  TOO_MANY_SUBSCRIPTIONS:
    'The subscription was refused: the WebSocket connection, the client or the gateway already holds as many as `MAX_SUBSCRIPTIONS_PER_CONNECTION`, `MAX_SUBSCRIPTIONS_PER_CLIENT` or `MAX_SUBSCRIPTIONS` allow, the gateway as many SSE streams as `MAX_SSE_SUBSCRIPTIONS` allows, or it has no memory for another (`SUBSCRIPTION_HEAP_LIMIT`); `extensions.limit` names which. Close one, or retry later.',
  TOO_MANY_WEBSOCKETS:
    'The WebSocket handshake was refused: this client already holds `MAX_WEBSOCKETS_PER_CLIENT` sockets (429), or the gateway `MAX_WEBSOCKETS` (503); `extensions.limit` names which. One socket carries many operations: close one, or retry later.',
  SHUTTING_DOWN:
    'The gateway is shutting down and takes no new WebSocket (503, with `Retry-After` in seconds): retry then, and another replica answers.',
  STATUS_PAGES_CHANGED:
    'The subscription ended because a status page it follows was removed from `STATUS_PAGES_FILE` while the gateway ran, or its feed (`baseUrl`, `versionPattern`…) changed there; `extensions.reason` says which (`page-removed`, `page-changed`) and `extensions.slugs` names the pages. Subscribe again to the pages `statusPages` lists.',
  SINCE_UNKNOWN:
    'The subscription was asked for the changes after `since`, and the gateway no longer knows them all (it keeps the last 100 changes of each page for 15 minutes, 4 MiB in all, only while the page is held in memory, and none from before it started); `extensions.knownSince` says from when it would (null: none). It goes on with the changes found from now on: query again for the state as it stands, and subscribe with its `fetchedAt` next time.',
  SLOW_SUBSCRIBER:
    'The subscription ended because its client fell behind: more than `SUBSCRIPTION_BACKLOG` events, or over SSE more than `SUBSCRIPTION_MAX_BUFFERED_BYTES` unread; `extensions.limit` names which. Subscribe again (`statusPageChanged` starts with the whole page).',
  CONFIGURATION_MISMATCH:
    "The gateway's configuration (`STATUS_PAGES_FILE`) names what an upstream does not have: beside a page's `chains`, a chain id the verification service does not list; beside a chain's `status`, `components` or `softwareVersion`, component ids its status page does not list. `extensions.missing` names them and `extensions.configured` where the file says so. The field answers with what exists; the gateway's operator fixes the file (the gateway logs it too).",
  INTERNAL_SERVER_ERROR:
    "A fault of the gateway's own, not of the request: the message is `Unexpected error.`, and the gateway's log holds what happened under the answer's request id (`x-request-id`).",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
