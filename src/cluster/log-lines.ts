import type { Readable } from 'node:stream';

/** The longest part of a line held while the rest is awaited: past it, it is written as it is. */
const MAX_PARTIAL_CHARS = 1024 * 1024;

/** Where the lines go: the primary's stdout, which its own log writes to as well. */
export interface LineSink {
  write(text: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/**
 * Passes a worker's output on to `sink` in whole lines. Every worker batches its log lines (64 KiB
 * at a time, `logger.ts`); a write that large to a pipe several processes share may be split and
 * interleaved with another's, cutting a JSON line in two. So each worker writes to a pipe of its
 * own, and the primary alone writes to stdout, whole lines only. While `sink` is behind, the
 * worker's pipe is paused, so that a slow reader of the log slows the workers' logging as it would
 * one process's, rather than filling the primary's memory.
 */
export function forwardLines(source: Readable, sink: LineSink): void {
  let partial = '';
  source.setEncoding('utf8');
  source.on('data', (chunk: string) => {
    const end = chunk.lastIndexOf('\n');
    if (end === -1) {
      partial += chunk;
      if (partial.length <= MAX_PARTIAL_CHARS) return;
      chunk = `${partial}\n`;
      partial = '';
      if (!sink.write(chunk)) pause();
      return;
    }
    const lines = partial + chunk.slice(0, end + 1);
    partial = chunk.slice(end + 1);
    if (!sink.write(lines)) pause();
  });
  source.on('end', () => {
    if (partial !== '') sink.write(`${partial}\n`);
    partial = '';
  });
  const pause = () => {
    source.pause();
    sink.once('drain', () => source.resume());
  };
}
