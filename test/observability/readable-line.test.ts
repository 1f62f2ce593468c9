import { describe, expect, it } from 'vitest';
import { readableLine } from '../../src/observability/readable-line.js';

describe('readableLine', () => {
  const time = new Date(2026, 10, 29, 9, 5, 7, 42).getTime();

  it('writes the time, level and message, then the other fields as key=value', () => {
    const line = JSON.stringify({
      level: 30,
      time,
      service: 'ledger-status-gateway',
      requestId: 'r-1',
      method: 'POST',
      path: '/graphql',
      status: 200,
      ms: 12.5,
      cache: 'hit',
      msg: 'request',
    });
    expect(readableLine(line, false)).toBe(
      '09:05:07.042 INFO  request requestId=r-1 method=POST path=/graphql status=200 ms=12.5 cache=hit',
    );
  });

  it('quotes a value with spaces, writes objects as JSON, and puts an error’s stack below', () => {
    const line = JSON.stringify({
      level: 50,
      time,
      upstream: 'status feed',
      pages: ['a', 'b'],
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here (x.js:1:1)' },
      msg: 'failed',
    });
    expect(readableLine(line, false)).toBe(
      [
        '09:05:07.042 ERROR failed upstream="status feed" pages=["a","b"] err=boom',
        '    Error: boom',
        '        at here (x.js:1:1)',
      ].join('\n'),
    );
  });

  it('colours the level when asked, and leaves a line that is no JSON object as it is', () => {
    expect(readableLine(JSON.stringify({ level: 40, time, msg: 'slow' }))).toContain('WARN');
    expect(readableLine('not json')).toBe('not json');
    expect(readableLine('[1,2]')).toBe('[1,2]');
  });
});
