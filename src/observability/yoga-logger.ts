import type { YogaLogger } from 'graphql-yoga';
import type { Logger } from 'pino';

/** Routes Yoga's own log calls, which take loose arguments, into the gateway's structured log. */
export function toYogaLogger(logger: Logger): YogaLogger {
  const child = logger.child({ component: 'yoga' });
  const forward =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) => {
      const error = args.find((arg) => arg instanceof Error);
      const message = args
        .filter((arg) => !(arg instanceof Error))
        .map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg)))
        .join(' ');
      // A client that hangs up mid-body is not the gateway's error (`abortIncoming`'s "aborted").
      if (error && isClientAbort(error)) child.debug({ err: error }, 'the client went away');
      else if (error) child[level]({ err: error }, message || error.message);
      else child[level](message);
    };
  return {
    debug: forward('debug'),
    info: forward('info'),
    warn: forward('warn'),
    error: forward('error'),
  };
}

const isClientAbort = (error: Error) =>
  error.message === 'aborted' && (error as NodeJS.ErrnoException).code === 'ECONNRESET';
