import type { Plugin } from 'graphql-yoga';

/**
 * The end of a subscription Yoga serves itself (not one of the hub's topics: a multipart request,
 * an `Accept` that names more than event streams): its request's `signal`, given to the
 * subscription (`openSubscription`), aborts when the request is (over SSE, the moment the client's
 * socket closes), or when Yoga answers it without a stream (406 for an `Accept` it cannot stream
 * to): either way nobody reads the subscription any more, and it must not count toward the limits.
 */
export function useSubscriptionAbort(): Plugin & { signalOf(request: Request): AbortSignal } {
  const controllers = new WeakMap<Request, AbortController>();
  return {
    signalOf(request) {
      let controller = controllers.get(request);
      if (!controller) {
        const made = new AbortController();
        if (request.signal.aborted) made.abort();
        else request.signal.addEventListener('abort', () => made.abort(), { once: true });
        controllers.set(request, made);
        controller = made;
      }
      return controller.signal;
    },
    onResponse({ request, response }) {
      const type = response.headers.get('content-type') ?? '';
      const streams = /^(text\/event-stream|multipart\/mixed)/.test(type);
      if (response.status !== 200 || !streams) controllers.get(request)?.abort();
    },
  };
}
