/**
 * A crowd of subscribers spread over several client processes (`bench/lib/fanout-client.ts`), for
 * `bench/fanout.ts`: a process here may hold only so many sockets (20,000 open files on the
 * machine the figures come from), so 50,000 SSE subscribers are opened by several, each from its
 * own loopback source addresses, told to start together once all are loaded, and their reports
 * merged as if one process had opened them (counts summed, the first start and the last settle,
 * percentiles over every receipt).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type {
  CrowdCommand,
  CrowdReport,
  OpenCommand,
  OpenedReport,
  ReceiptReport,
} from './fanout-client.js';
import { cpuOf, type ProcessId, processId } from './process-tree.js';
import { ROOT } from './processes.js';

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** One client process, spoken to over IPC: one question at a time, answers in order. */
function startClient() {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--max-old-space-size=4096', '--import', 'tsx', resolve(ROOT, 'bench/lib/fanout-client.ts')],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  children.add(child);
  const waiting: ((message: CrowdReport) => void)[] = [];
  let markReady: () => void = () => {};
  const ready = new Promise<void>((done) => {
    markReady = done;
  });
  child.on('message', (message: CrowdReport) => {
    if (message.type === 'ready') markReady();
    else waiting.shift()?.(message);
  });
  const exited = new Promise<void>((done) =>
    child.on('exit', () => {
      children.delete(child);
      done();
    }),
  );
  const ask = <T>(command: CrowdCommand, timeoutMs: number) =>
    new Promise<T>((answer, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`a crowd process did not answer ${command.type}`)),
        timeoutMs,
      );
      waiting.push((message) => {
        clearTimeout(timer);
        if (message.type === 'failed') fail(new Error(`the crowd: ${message.error}`));
        else answer(message as T);
      });
      child.send(command);
    });
  return {
    pid: child.pid,
    ready: Promise.race([
      ready,
      exited.then(() => {
        throw new Error('a crowd process exited before it was ready');
      }),
    ]),
    ask,
    tell: (command: CrowdCommand) => child.send(command),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ type: 'close' } satisfies CrowdCommand);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Source addresses each client process may use: enough for this many connections. */
const MAX_CONNECTIONS_PER_CLIENT = 64_000;

export type CrowdOpen = Omit<OpenCommand, 'type' | 'addressOffset' | 'probe'>;

export interface CrowdReceipts extends ReceiptReport {
  /** Receipts per client process, in their order. */
  perClient: number[];
}

const sumCounts = (all: readonly Record<string, number>[]) => {
  const total: Record<string, number> = {};
  for (const counts of all) {
    for (const [key, count] of Object.entries(counts)) total[key] = (total[key] ?? 0) + count;
  }
  return total;
};

/** The q-quantile of ascending `times`. */
const quantile = (times: readonly number[], q: number) =>
  times.length === 0 ? null : (times[Math.ceil(q * times.length) - 1] ?? null);

/**
 * `clients` client processes, ready (loaded) when this resolves. `open` splits the subscribers
 * and the concurrency between them (over graphql-ws, whole sockets), gives each its own source
 * addresses, and starts them together.
 */
export async function startCrowd(clients: number, perAddress: number) {
  const processes = Array.from({ length: clients }, () => startClient());
  await Promise.all(processes.map((client) => client.ready));
  const ids: ProcessId[] = processes
    .map((client) => (client.pid === undefined ? null : processId(client.pid)))
    .filter((id): id is ProcessId => id !== null);
  const stride = Math.ceil(MAX_CONNECTIONS_PER_CLIENT / perAddress);
  const each = async <T>(command: (index: number) => CrowdCommand, timeoutMs: number) =>
    Promise.all(processes.map((client, index) => client.ask<T>(command(index), timeoutMs)));

  return {
    clients,
    pids: ids,
    /** CPU time of the client processes so far, in ms. */
    cpu: () => cpuOf(ids),
    /** One SSE subscriber, the probe, from the first client, from an address of its own. */
    async probe(origin: string, probe: { query: string; variables: Record<string, unknown> }) {
      await processes[0]?.ask(
        { type: 'probe', origin, ...probe, address: clients * stride },
        60_000,
      );
    },
    async open(command: CrowdOpen, timeoutMs: number): Promise<OpenedReport> {
      const perSocket = command.transport === 'ws' ? command.perSocket : 1;
      const connections = Math.ceil(command.subscribers / perSocket);
      if (connections / clients > MAX_CONNECTIONS_PER_CLIENT) {
        throw new Error(`more than ${MAX_CONNECTIONS_PER_CLIENT} connections per client process`);
      }
      // Connections split as evenly as they go; the last one's socket may hold fewer.
      const shares = Array.from({ length: clients }, (_, index) => {
        const first = Math.floor((connections * index) / clients);
        const next = Math.floor((connections * (index + 1)) / clients);
        const from = first * perSocket;
        return Math.max(0, Math.min(next * perSocket, command.subscribers) - from);
      });
      const concurrency = Math.max(1, Math.ceil(command.concurrency / clients));
      const reports = await each<OpenedReport>(
        (index) => ({
          type: 'open',
          ...command,
          subscribers: shares[index] ?? 0,
          concurrency,
          addressOffset: index * stride,
        }),
        timeoutMs,
      );
      return {
        type: 'opened',
        open: reports.reduce((sum, report) => sum + report.open, 0),
        peakOpen: reports.reduce((sum, report) => sum + report.peakOpen, 0),
        refused: sumCounts(reports.map((report) => report.refused)),
        failed: sumCounts(reports.map((report) => report.failed)),
        connections: reports.reduce((sum, report) => sum + report.connections, 0),
        addresses: reports.reduce((sum, report) => sum + report.addresses, 0),
        startedAt: Math.min(...reports.map((report) => report.startedAt)),
        settledAt: Math.max(...reports.map((report) => report.settledAt)),
      };
    },
    arm(status?: string) {
      for (const client of processes) {
        client.tell({ type: 'arm', ...(status === undefined ? {} : { status }) });
      }
    },
    /** Receipts so far, merged; with `times`, their percentiles over the whole crowd. */
    async report(times = false, timeoutMs = 30_000): Promise<CrowdReceipts> {
      const reports = await each<ReceiptReport>(() => ({ type: 'report', times }), timeoutMs);
      const firsts = reports.map((report) => report.first).filter((at) => at !== null);
      const lasts = reports.map((report) => report.last).filter((at) => at !== null);
      const all = times
        ? reports.flatMap((report) => report.times ?? []).sort((a, b) => a - b)
        : null;
      const probe = reports.find((report) => report.probeDetectedAt !== null);
      return {
        type: 'receipts',
        live: reports.reduce((sum, report) => sum + report.live, 0),
        received: reports.reduce((sum, report) => sum + report.received, 0),
        unexpected: reports.reduce((sum, report) => sum + report.unexpected, 0),
        first: firsts.length ? Math.min(...firsts) : null,
        last: lasts.length ? Math.max(...lasts) : null,
        p50: all === null ? null : quantile(all, 0.5),
        p99: all === null ? null : quantile(all, 0.99),
        probeDetectedAt: probe?.probeDetectedAt ?? null,
        probeReceivedAt: probe?.probeReceivedAt ?? null,
        ended: sumCounts(reports.map((report) => report.ended)),
        errors: sumCounts(reports.map((report) => report.errors)),
        perClient: reports.map((report) => report.received),
      };
    },
    async close() {
      await Promise.all(processes.map((client) => client.close()));
    },
  };
}

export type Crowd = Awaited<ReturnType<typeof startCrowd>>;
