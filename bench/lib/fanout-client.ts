/**
 * The crowd for `bench/fanout.ts`: a child process (started with an IPC channel) that opens many
 * subscribers to the gateway, SSE (one HTTP connection each) or graphql-ws (`perSocket`
 * subscriptions per socket), spread over loopback source addresses (127.0.1.1, 127.0.1.2, …,
 * from `addressOffset` on) so that no address runs out of ephemeral ports. It keeps as little per
 * subscriber as it can: the socket, a receipt time and a few bytes of parser state. A crowd larger
 * than one process's open files is several of these (`bench/lib/crowd.ts`), each with its own
 * addresses.
 *
 * Says `ready` once loaded. Messages from the bench: `probe` (one SSE subscriber whose events
 * carry `detectedAt`), `open` (what to open), `arm` (the change is about to be made: the next
 * event counts), `report` (how many got it, and when), `close`. See `CrowdCommand`.
 */
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import WebSocket from 'ws';

export interface OpenCommand {
  type: 'open';
  origin: string;
  transport: 'sse' | 'ws';
  subscribers: number;
  query: string;
  variables: Record<string, unknown>;
  /** graphql-ws: subscriptions per socket. */
  perSocket: number;
  /** Subscribers (SSE) or sockets (graphql-ws) being opened at once. */
  concurrency: number;
  /** Connections per loopback source address. */
  perAddress: number;
  /** The index of the first source address (see `sourceAddress`); default 0. */
  addressOffset?: number;
  /** One more SSE subscriber with this document, whose events carry the gateway's `detectedAt`. */
  probe?: { query: string; variables: Record<string, unknown> };
}

/** The probe alone, from source address `address`, before the crowd opens. */
export interface ProbeCommand {
  type: 'probe';
  origin: string;
  query: string;
  variables: Record<string, unknown>;
  address: number;
}

export type CrowdCommand =
  | OpenCommand
  | ProbeCommand
  | { type: 'arm'; status?: string }
  /** `times`: with every receipt's time, for percentiles over several crowd processes. */
  | { type: 'report'; times?: boolean }
  | { type: 'close' };

export interface OpenedReport {
  type: 'opened';
  /** Subscriptions the gateway accepted, as far as the client can tell. */
  open: number;
  /** Refusals by error code (TOO_MANY_SUBSCRIPTIONS, TOO_MANY_WEBSOCKETS, HTTP 4xx/5xx, …). */
  refused: Record<string, number>;
  /** Connections that failed without an answer (reset, refused, timeout). */
  failed: Record<string, number>;
  /** The most subscriptions open at once while opening (more than `open` if the gateway died). */
  peakOpen: number;
  connections: number;
  addresses: number;
  /** Epoch ms (fractional): first request sent, last subscription settled. */
  startedAt: number;
  settledAt: number;
}

export interface ReceiptReport {
  type: 'receipts';
  /** Subscribers still open. */
  live: number;
  /** Of them, those that got an event since `arm`. */
  received: number;
  /** Events since `arm` that were not the expected status (other changes, errors). */
  unexpected: number;
  /** Epoch ms of receipts since `arm`: first, last, and percentiles. */
  first: number | null;
  last: number | null;
  p50: number | null;
  p99: number | null;
  /** The probe's `detectedAt` (epoch ms) and when the probe got it. */
  probeDetectedAt: number | null;
  probeReceivedAt: number | null;
  /** Subscriptions the server ended (or whose connection went away) since they opened, by reason. */
  ended: Record<string, number>;
  /** Errors received on open subscriptions, by code. */
  errors: Record<string, number>;
  /** Epoch ms of every receipt since `arm`, ascending, when asked for. */
  times?: number[];
}

const now = () => performance.timeOrigin + performance.now();
const bump = (counts: Record<string, number>, key: string, by = 1) => {
  counts[key] = (counts[key] ?? 0) + by;
};

/** 127.0.1.1, 127.0.1.2, … 127.0.1.254, 127.0.2.1, … */
export const sourceAddress = (index: number) =>
  `127.0.${1 + Math.floor(index / 254)}.${1 + (index % 254)}`;

let armed = false;
let armedStatus: string | undefined;
let receipts: Float64Array = new Float64Array(0);
let receivedCount = 0;
let unexpected = 0;
let live = 0;
let peakLive = 0;
let probeDetectedAt: number | null = null;
let probeReceivedAt: number | null = null;
const ended: Record<string, number> = {};
const errors: Record<string, number> = {};
const closers: (() => void)[] = [];
let closing = false;

interface Payload {
  data?: Record<string, { status?: string; detectedAt?: string } | null> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

const errorCode = (payload: Payload) =>
  payload.errors?.[0]?.extensions?.code ?? payload.errors?.[0]?.message.slice(0, 60) ?? 'ERROR';

/** An event for subscriber `index` (−1: the probe), before or after `arm`. */
function onEvent(index: number, payload: Payload): void {
  if (payload.errors?.length) {
    bump(errors, errorCode(payload));
    return;
  }
  if (!armed) return;
  const at = now();
  if (index < 0) {
    const change = payload.data && Object.values(payload.data)[0];
    if (probeReceivedAt === null && change?.detectedAt) {
      probeReceivedAt = at;
      probeDetectedAt = Date.parse(change.detectedAt);
    }
    return;
  }
  if (receipts[index] !== 0) return;
  const change = payload.data && Object.values(payload.data)[0];
  // componentStatusChanged carries the status; statusPageChanged does not (any event counts).
  if (armedStatus !== undefined && change?.status !== undefined && change.status !== armedStatus) {
    unexpected += 1;
    return;
  }
  receipts[index] = at;
  receivedCount += 1;
}

/** Splits an SSE stream into events and hands `event: next` data on; minimal, as a crowd needs. */
function sseParser(onData: (data: string, event: string) => void) {
  let buffer = '';
  return (chunk: string) => {
    buffer += chunk;
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end < 0) return;
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trimStart();
      }
      if (data !== '' || event === 'complete') onData(data, event);
    }
  };
}

interface Settle {
  ok: boolean;
  refusal?: string;
  failure?: string;
}

/**
 * One SSE subscriber, on a raw socket: node:http's client cost about 0.8 ms of CPU per
 * subscriber, as much as the gateway's side, so the crowd could not open 5,000 a second. The
 * request is written as bytes and the answer read with just enough HTTP/1.1 (a status line,
 * headers, a chunked body) for an event stream. Settles when the stream is open (its headers) or
 * refused. A refusal over SSE is a 200 stream whose first `next` event carries only errors, then
 * `complete`: told through `onRefusal`, as it may come after the headers settled.
 */
function openSse(
  origin: URL,
  body: string,
  localAddress: string,
  index: number,
  timeoutMs: number,
  onRefusal: (code: string) => void,
): Promise<Settle> {
  const counted = index >= 0;
  return new Promise((settle) => {
    let settled = false;
    let open = false;
    const done = (result: Settle) => {
      if (settled) return;
      settled = true;
      settle(result);
    };
    const gone = (reason: string | undefined) => {
      if (!open) return;
      open = false;
      if (counted) live -= 1;
      if (reason !== undefined && !closing) bump(ended, reason);
    };
    const socket = connect({ host: origin.hostname, port: Number(origin.port), localAddress });
    socket.setEncoding('latin1');
    const timer = setTimeout(() => {
      done({ ok: false, failure: 'timeout' });
      socket.destroy();
    }, timeoutMs);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done({ ok: false, failure: error.code ?? error.message });
      gone(error.code ?? 'error');
    });
    socket.on('close', () => {
      clearTimeout(timer);
      done({ ok: false, failure: 'closed before an answer' });
      gone('connection closed');
    });
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: ${origin.host}\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    let buffer = '';
    /** The status and content length of a refusal, once its headers are read. */
    let refusal: { status: number; length: number } | undefined;
    let events: ((chunk: string) => void) | undefined;
    let first = true;
    let refused = false;
    const onData = sseParser((data, event) => {
      if (event === 'complete') {
        gone(refused ? undefined : 'complete');
        return;
      }
      if (event !== 'next') return;
      let payload: Payload;
      try {
        payload = JSON.parse(data) as Payload;
      } catch {
        bump(errors, 'unparsable');
        return;
      }
      if (first && payload.errors?.length && !payload.data) {
        first = false;
        refused = true;
        onRefusal(errorCode(payload));
        gone(undefined);
        socket.destroy();
        return;
      }
      first = false;
      onEvent(index, payload);
    });
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (events) {
        events(chunk);
        return;
      }
      if (refusal) {
        if (buffer.length >= refusal.length) refused_(buffer.slice(0, refusal.length));
        return;
      }
      const headEnd = buffer.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = buffer.slice(0, headEnd).toLowerCase();
      const rest = buffer.slice(headEnd + 4);
      buffer = '';
      const status = Number(head.slice(9, 12));
      clearTimeout(timer);
      if (status !== 200 || !head.includes('content-type: text/event-stream')) {
        const length = Number(/content-length: (\d+)/.exec(head)?.[1] ?? 0);
        refusal = { status, length };
        buffer = rest;
        if (buffer.length >= length) refused_(buffer.slice(0, length));
        return;
      }
      open = true;
      if (counted) {
        live += 1;
        peakLive = Math.max(peakLive, live);
      }
      closers.push(() => socket.destroy());
      events = chunkedBody(onData);
      done({ ok: true });
      if (rest !== '') events(rest);
    });
    const refused_ = (text: string) => {
      let code = `HTTP ${refusal?.status}`;
      try {
        code = errorCode(JSON.parse(text) as Payload);
      } catch {
        // Not JSON: the status is the reason.
      }
      done({ ok: false, refusal: code });
      socket.destroy();
    };
  });
}

/** Reads a chunked HTTP/1.1 body (latin1 text) as it arrives, handing each chunk's data on. */
function chunkedBody(onData: (data: string) => void): (text: string) => void {
  let pending = '';
  /** Bytes left of the chunk being read, then its CRLF; -1 while reading a size line. */
  let left = -1;
  return (text) => {
    pending += text;
    for (;;) {
      if (left < 0) {
        const lineEnd = pending.indexOf('\r\n');
        if (lineEnd < 0) return;
        left = Number.parseInt(pending.slice(0, lineEnd), 16) + 2;
        pending = pending.slice(lineEnd + 2);
      }
      if (pending.length === 0) return;
      const take = Math.min(left, pending.length);
      const data = pending.slice(0, take);
      pending = pending.slice(take);
      left -= take;
      // The chunk's own CRLF is not data; what comes of it in pieces is handed on as it comes.
      const payload = left < 2 ? data.slice(0, Math.max(0, data.length - (2 - left))) : data;
      if (payload !== '') onData(payload);
      if (left === 0) left = -1;
    }
  };
}

/** One graphql-ws socket with `count` subscriptions, ids `first…first+count-1`. */
function openWs(
  origin: URL,
  query: string,
  variables: Record<string, unknown>,
  first: number,
  count: number,
  localAddress: string,
  timeoutMs: number,
  onRefusal: (code: string) => void,
): Promise<Settle> {
  return new Promise((settle) => {
    let settled = false;
    const done = (result: Settle) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      settle(result);
    };
    const socket = new WebSocket(`ws://${origin.host}/graphql`, 'graphql-transport-ws', {
      localAddress,
      perMessageDeflate: false,
    });
    const timer = setTimeout(() => {
      done({ ok: false, failure: 'timeout' });
      socket.terminate();
    }, timeoutMs);
    const active = new Set<number>();
    socket.on('open', () => {
      socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    });
    socket.on('unexpected-response', (_req, res) => {
      res.setEncoding('utf8');
      refusalOf(res, (refusal) => done({ ok: false, refusal }));
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      done({ ok: false, failure: error.code ?? error.message });
    });
    socket.on('close', (code) => {
      done({ ok: false, failure: `closed ${code}` });
      if (active.size > 0) {
        live -= active.size;
        if (!closing) bump(ended, `socket closed ${code}`, active.size);
        active.clear();
      }
    });
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as {
        type: string;
        id?: string;
        payload?: Payload | Payload['errors'];
      };
      switch (message.type) {
        case 'connection_ack':
          for (let i = 0; i < count; i += 1) {
            const index = first + i;
            socket.send(
              JSON.stringify({
                id: String(index),
                type: 'subscribe',
                payload: { query, variables },
              }),
            );
            active.add(index);
            live += 1;
            peakLive = Math.max(peakLive, live);
          }
          // The gateway handles a socket's messages in order: the pong follows the subscribes.
          socket.send(JSON.stringify({ type: 'ping' }));
          closers.push(() => socket.terminate());
          return;
        case 'pong':
          done({ ok: true });
          return;
        case 'ping':
          socket.send(JSON.stringify({ type: 'pong' }));
          return;
        case 'next':
          onEvent(Number(message.id), message.payload as Payload);
          return;
        case 'error': {
          const index = Number(message.id);
          if (active.delete(index)) {
            live -= 1;
            onRefusal(errorCode({ errors: message.payload as Payload['errors'] }));
          }
          return;
        }
        case 'complete': {
          const index = Number(message.id);
          if (active.delete(index)) {
            live -= 1;
            if (!closing) bump(ended, 'complete');
          }
          return;
        }
      }
    });
  });
}

/** Runs `tasks` with at most `limit` at once. */
async function pool(count: number, limit: number, task: (index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, count) }, async () => {
      while (next < count) {
        const index = next;
        next += 1;
        await task(index);
      }
    }),
  );
}

/** Opens the probe subscriber from source address `address`; fails unless it stays open. */
async function openProbe(
  origin: URL,
  probe: { query: string; variables: Record<string, unknown> },
  address: number,
): Promise<void> {
  let probeRefusal: string | undefined;
  const opened = await openSse(
    origin,
    JSON.stringify(probe),
    sourceAddress(address),
    -1,
    30_000,
    (code) => {
      probeRefusal = code;
    },
  );
  await new Promise((done) => setTimeout(done, 200));
  if (!opened.ok || probeRefusal) {
    throw new Error(
      `the probe subscriber was not opened: ${probeRefusal ?? JSON.stringify(opened)}`,
    );
  }
}

async function open(command: OpenCommand): Promise<OpenedReport> {
  const origin = new URL(command.origin);
  receipts = new Float64Array(command.subscribers);
  const refused: Record<string, number> = {};
  const failed: Record<string, number> = {};
  let accepted = 0;
  const connections =
    command.transport === 'sse'
      ? command.subscribers
      : Math.ceil(command.subscribers / command.perSocket);
  const addresses = Math.max(1, Math.ceil(connections / command.perAddress));
  const timeoutMs = 30_000;
  const offset = command.addressOffset ?? 0;
  if (command.probe) await openProbe(origin, command.probe, offset + addresses);
  const startedAt = now();
  const body = JSON.stringify({ query: command.query, variables: command.variables });
  await pool(connections, command.concurrency, async (connection) => {
    const localAddress = sourceAddress(offset + (connection % addresses));
    if (command.transport === 'sse') {
      const result = await openSse(origin, body, localAddress, connection, timeoutMs, (code) =>
        bump(refused, code),
      );
      if (result.ok) accepted += 1;
      else if (result.refusal) bump(refused, result.refusal);
      else bump(failed, result.failure ?? '?');
      return;
    }
    const first = connection * command.perSocket;
    const count = Math.min(command.perSocket, command.subscribers - first);
    let refusedHere = 0;
    const result = await openWs(
      origin,
      command.query,
      command.variables,
      first,
      count,
      localAddress,
      timeoutMs,
      (code) => {
        refusedHere += 1;
        bump(refused, code);
      },
    );
    if (result.ok) accepted += count - refusedHere;
    else if (result.refusal) bump(refused, result.refusal, count);
    else bump(failed, result.failure ?? '?', count);
  });
  const settledAt = now();
  // Refusals on sockets that had already settled arrive a little later.
  await new Promise((done) => setTimeout(done, 500));
  return {
    type: 'opened',
    // Refused streams were settled as open and have been taken off `live` since.
    open: Math.min(accepted, live),
    peakOpen: peakLive,
    refused,
    failed,
    connections,
    addresses,
    startedAt,
    settledAt,
  };
}

function receiptReport(withTimes = false): ReceiptReport {
  const times: number[] = [];
  for (const at of receipts) if (at !== 0) times.push(at);
  times.sort((a, b) => a - b);
  const at = (q: number) =>
    times.length ? (times[Math.ceil(q * times.length) - 1] ?? null) : null;
  return {
    type: 'receipts',
    live,
    received: receivedCount,
    unexpected,
    first: times[0] ?? null,
    last: times.at(-1) ?? null,
    p50: at(0.5),
    p99: at(0.99),
    probeDetectedAt,
    probeReceivedAt,
    ended: { ...ended },
    errors: { ...errors },
    ...(withTimes ? { times } : {}),
  };
}

export type CrowdReport =
  | OpenedReport
  | ReceiptReport
  | { type: 'ready' }
  | { type: 'probed' }
  | { type: 'failed'; error: string };

const send = (message: CrowdReport) => process.send?.(message);

process.on('message', (command: CrowdCommand) => {
  switch (command.type) {
    case 'open':
      open(command).then(send, (error: unknown) => send({ type: 'failed', error: String(error) }));
      return;
    case 'probe':
      openProbe(
        new URL(command.origin),
        { query: command.query, variables: command.variables },
        command.address,
      ).then(
        () => send({ type: 'probed' }),
        (error: unknown) => send({ type: 'failed', error: String(error) }),
      );
      return;
    case 'arm':
      armed = true;
      armedStatus = command.status;
      receipts.fill(0);
      receivedCount = 0;
      unexpected = 0;
      probeDetectedAt = null;
      probeReceivedAt = null;
      return;
    case 'report':
      send(receiptReport(command.times));
      return;
    case 'close':
      closing = true;
      for (const close of closers) close();
      setTimeout(() => process.exit(0), 200).unref();
      process.disconnect?.();
      return;
  }
});
// The bench went away: nothing to report to.
process.on('disconnect', () => {
  closing = true;
  for (const close of closers) close();
  process.exit(0);
});
send({ type: 'ready' });

/** Why an answer refused a subscriber: its error's code, or its status when it has no JSON body. */
function refusalOf(res: IncomingMessage, then: (refusal: string) => void): void {
  let text = '';
  res.on('data', (chunk: string) => {
    if (text.length < 4096) text += chunk;
  });
  res.on('end', () => {
    let code = `HTTP ${res.statusCode}`;
    try {
      code = errorCode(JSON.parse(text) as Payload);
    } catch {
      // Not JSON: the status is the reason.
    }
    then(code);
  });
}
