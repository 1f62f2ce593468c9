import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';
import { currentRequestScope } from './request-scope.js';

/** Where each logger's lines go, for code that writes a line it built itself (`lineWriterOf`). */
const destinations = new WeakMap<Logger, DestinationStream>();

/**
 * The gateway's structured log: one JSON object a line on stdout. Anything that could carry a
 * secret is redacted at this single point as a second line of defence.
 *
 * Stdout is written in batches (see `batchedStdout`) rather than one write per line: with a line
 * per request, a write per line costs a third of the throughput. `flushLogger` empties the batch
 * at exit. A line written while a request is served carries its `requestId` (see `RequestScope`).
 */
export function createLogger(level: LevelWithSilent, destination?: DestinationStream): Logger {
  const stream = destination ?? batchedStdout();
  const logger = pino(options(level), stream);
  destinations.set(logger, stream);
  return logger;
}

/**
 * A writer of whole lines to `logger`'s destination, for a line too frequent to build through
 * pino (a response-cache hit's request line, see `request-log.ts`): the caller writes exactly what
 * pino would, level check included. `undefined` for a logger `createLogger` did not make.
 */
export function lineWriterOf(logger: Logger): ((line: string) => void) | undefined {
  const destination = destinations.get(logger);
  return destination && ((line) => void destination.write(line));
}

/** Bytes gathered before they are handed to stdout at once. */
const BATCH_BYTES = 16 * 1024;

/**
 * Stdout, written in batches of up to 16 KiB and at least every half second. Lines are gathered
 * in a list and joined once per batch: pino's own buffer (sonic-boom's `minLength`) re-measures
 * all it holds on every line, which cost about 20 µs per request line under load.
 */
function batchedStdout(): DestinationStream & { flush(callback?: () => void): void } {
  const stdout = pino.destination({ dest: 1, sync: false });
  let lines: string[] = [];
  let size = 0;
  const handOver = () => {
    if (lines.length === 0) return;
    stdout.write(lines.join(''));
    lines = [];
    size = 0;
  };
  setInterval(handOver, 500).unref();
  process.once('exit', () => {
    handOver();
    stdout.flushSync();
  });
  return {
    write(line: string) {
      lines.push(line);
      size += line.length;
      if (size >= BATCH_BYTES) handOver();
    },
    flush(callback) {
      handOver();
      // What is still being written goes out synchronously at exit (above).
      stdout.flush(() => callback?.());
    },
  };
}

function options(level: LevelWithSilent) {
  return {
    level,
    base: { service: 'ledger-status-gateway' },
    // Every line a request causes (an upstream warning, a circuit change, a stale snapshot) names it.
    mixin: () => {
      const scope = currentRequestScope();
      return scope ? { requestId: scope.requestId } : {};
    },
    redact: {
      paths: [
        'apiKey',
        '*.apiKey',
        '*.*.apiKey',
        'req.headers.cookie',
        'req.headers.authorization',
      ],
      censor: '[redacted]',
    },
  };
}

/** Writes out whatever the logger still buffers; call it before the process exits. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
