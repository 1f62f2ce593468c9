import type { Plugin } from 'graphql-yoga';

/**
 * Marks every answer Yoga gives `Cache-Control: no-store` unless it says otherwise: mutations,
 * answers that read the verification service or the session cookie, answers with errors or built
 * from a stale snapshot may not be kept by a browser or a CDN. The front door replaces the header
 * on the answers the response cache may serve again (status answers), which are public.
 */
export function useNoStore(): Plugin {
  return {
    onResponse({ response }) {
      if (!response.headers.has('cache-control')) response.headers.set('cache-control', 'no-store');
    },
  };
}
