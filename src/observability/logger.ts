import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';
import { readableLine } from './readable-line.js';
import { currentRequestScope } from './request-scope.js';

/**
 * How the log is written on stdout: a JSON object a line, for whatever collects the log, or a
 * line a person reads in a terminal (`readableLine`).
 */
export type LogFormat = 'json' | 'readable';

/**
 * Readable lines when stdout is a terminal, outside production; JSON otherwise (a pipe, a file,
 * a container's log), and always in production, where a collector reads it whatever runs it.
 */
export function logFormatFor(environment: string | undefined): LogFormat {
  return environment !== 'production' && process.stdout.isTTY === true ? 'readable' : 'json';
}

/** Stdout, written as `format` says: JSON in batches (`batchedStdout`), or readable lines. */
export function stdoutLog(format: LogFormat): FlushableDestination {
  return format === 'json' ? batchedStdout() : readableStdout();
}

type FlushableDestination = DestinationStream & { flush(callback?: () => void): void };

/**
 * The gateway's structured log: one JSON object a line, on stdout unless `destination` is given.
 * Anything that could carry a secret is redacted at this single point as a second line of defence.
 *
 * Stdout is written in batches (see `batchedStdout`) rather than one write per line: with a line
 * per request, a write per line costs a third of the throughput. `flushLogger` empties the batch
 * at exit. A line written while a request is served carries its `requestId` (see `RequestScope`).
 */
export function createLogger(
  level: LevelWithSilent,
  destination: DestinationStream = batchedStdout(),
): Logger {
  return pino(
    {
      level,
      base: { service: 'ledger-status-gateway' },
      // Every line a request causes (an upstream warning, a circuit change, a stale snapshot) names
      // it, and its trace when tracing is on.
      mixin: () => {
        const scope = currentRequestScope();
        if (!scope) return {};
        return scope.span
          ? { requestId: scope.requestId, traceId: scope.span.spanContext().traceId }
          : { requestId: scope.requestId };
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
    },
    destination,
  );
}

/** Bytes gathered before they are handed to stdout at once. */
const BATCH_BYTES = 64 * 1024;

/**
 * Stdout, written in batches of up to 64 KiB and at least every half second. Each line is copied
 * into the batch's buffer as it comes, and the buffer is handed to stdout whole: pino's own buffer
 * (sonic-boom's `minLength`) re-measured all it held on every line, about 20 µs per request line
 * under load, and a list of strings joined per batch still paid for the join and the UTF-8
 * conversion of the whole batch.
 */
function batchedStdout(): FlushableDestination {
  const stdout = pino.destination({ dest: 1, sync: false, contentMode: 'buffer' });
  // In buffer mode sonic-boom writes Buffers; its types only know strings.
  const writeBytes = stdout.write.bind(stdout) as unknown as (bytes: Buffer) => boolean;
  let batch = Buffer.allocUnsafe(BATCH_BYTES);
  let used = 0;
  const handOver = () => {
    if (used === 0) return;
    writeBytes(batch.subarray(0, used));
    batch = Buffer.allocUnsafe(BATCH_BYTES);
    used = 0;
  };
  setInterval(handOver, 500).unref();
  process.once('exit', () => {
    handOver();
    stdout.flushSync();
  });
  return {
    write(line: string) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit: checked on the length, never measured.
      if (line.length * 3 > BATCH_BYTES - used) {
        handOver();
        if (line.length * 3 > BATCH_BYTES) {
          writeBytes(Buffer.from(line, 'utf8'));
          return;
        }
      }
      used += batch.write(line, used);
    },
    flush(callback) {
      handOver();
      // What is still being written goes out synchronously at exit (above).
      stdout.flush(() => callback?.());
    },
  };
}

/**
 * Stdout as a person reads it: each line pino (or the request log's hand-built hit line) writes is
 * turned into `readableLine`'s text as it comes, and written at once: a terminal's reader is not a
 * log collector under load, and lines written as they come keep their order with those of another
 * logger of the process (`npm start`'s own, before the gateway's).
 */
function readableStdout(): FlushableDestination {
  const stdout = pino.destination({ dest: 1, sync: true });
  return {
    write(text: string) {
      let readable = '';
      for (const line of text.split('\n')) if (line) readable += `${readableLine(line)}\n`;
      stdout.write(readable);
    },
    flush(callback) {
      callback?.();
    },
  };
}

/** Writes out whatever the logger still buffers; call it before the process exits. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
