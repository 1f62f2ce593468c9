import { styleText } from 'node:util';

/** pino's level numbers, as a reader names them (padded to one width). */
const LEVELS: Readonly<Record<number, { name: string; color: Parameters<typeof styleText>[0] }>> = {
  10: { name: 'TRACE', color: 'gray' },
  20: { name: 'DEBUG', color: 'gray' },
  30: { name: 'INFO ', color: 'green' },
  40: { name: 'WARN ', color: 'yellow' },
  50: { name: 'ERROR', color: 'red' },
  60: { name: 'FATAL', color: ['bgRed', 'white'] },
};

/** Fields every line has, or that a reader at a terminal does not need: left out. */
const LEFT_OUT = new Set(['level', 'time', 'msg', 'service', 'hostname']);

/**
 * One JSON log line as a person reads it in a terminal: its local time, level and message, then
 * its other fields as `key=value` (a value with spaces or quotes as JSON), and an error's stack
 * on the lines below. Colours follow the terminal (`NO_COLOR`, `FORCE_COLOR`). A line that is not
 * a JSON object is left as it is.
 */
export function readableLine(json: string, colors = true): string {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return json;
    record = parsed as Record<string, unknown>;
  } catch {
    return json;
  }
  const style = (color: Parameters<typeof styleText>[0], text: string) =>
    colors ? styleText(color, text) : text;
  const level = LEVELS[record.level as number] ?? { name: String(record.level), color: 'white' };
  const parts = [
    typeof record.time === 'number' ? style('gray', clock(new Date(record.time))) : undefined,
    style(level.color, level.name),
    typeof record.msg === 'string' ? record.msg : undefined,
  ];
  let stack = '';
  for (const [key, value] of Object.entries(record)) {
    if (LEFT_OUT.has(key) || value === undefined) continue;
    if (isError(value)) {
      parts.push(`${style('gray', `${key}=`)}${text(value.message)}`);
      stack += `\n${value.stack.replace(/^/gm, '    ')}`;
      continue;
    }
    parts.push(`${style('gray', `${key}=`)}${text(value)}`);
  }
  return `${parts.filter((part) => part !== undefined).join(' ')}${stack}`;
}

/** `HH:MM:SS.mmm`, local time. */
function clock(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

/** A value as it reads after `key=`: bare when it is one word, JSON otherwise. */
function text(value: unknown): string {
  if (typeof value === 'string' && /^[^\s"=]+$/.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

/** An error as pino serializes it (`err`, with `type`, `message` and `stack`). */
function isError(value: unknown): value is { message: string; stack: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { stack?: unknown }).stack === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}
