import type { Plugin } from 'graphql-yoga';

const NOTICE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ledger status gateway</title></head>
<body><h1>GraphQL endpoint</h1>
<p>GraphiQL is turned off in this deployment (<code>GRAPHIQL</code>). Send GraphQL operations here
as <code>POST</code> with <code>Content-Type: application/json</code>, or as <code>GET</code> with a
<code>query</code> parameter.</p></body></html>
`;

/**
 * With GraphiQL off, a browser opening the endpoint would get Yoga's bare 406 with an empty body.
 * It gets a short page saying what the endpoint is and how to call it, still with 406: no
 * GraphQL answer is served as HTML.
 */
export function useGraphiQLOffNotice({ endpoint }: { endpoint: string }): Plugin {
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (
        request.method !== 'GET' ||
        url.pathname !== endpoint ||
        url.searchParams.has('query') ||
        !(request.headers.get('accept') ?? '').includes('text/html')
      ) {
        return;
      }
      endResponse(
        new fetchAPI.Response(NOTICE, {
          status: 406,
          headers: { 'content-type': 'text/html; charset=utf-8' },
        }),
      );
    },
  };
}
