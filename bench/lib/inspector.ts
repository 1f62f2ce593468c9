/**
 * The V8 inspector of a child process started with `--inspect=127.0.0.1:<port>`: a full garbage
 * collection and the heap left after it, measured from outside without changing the process's own
 * code (no `--expose-gc`, no endpoint of ours).
 */
import WebSocket from 'ws';

export interface Inspector {
  /** Collects garbage in full, then reads the heap: what the process really holds. */
  heapAfterGc(): Promise<{ usedBytes: number; limitBytes: number }>;
  close(): void;
}

/** Connects to the inspector listening on `port`, waiting up to `timeoutMs` for it. */
export async function connectInspector(port: number, timeoutMs = 10_000): Promise<Inspector> {
  const deadline = performance.now() + timeoutMs;
  let url: string | undefined;
  while (url === undefined) {
    try {
      const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
        webSocketDebuggerUrl: string;
      }[];
      url = targets[0]?.webSocketDebuggerUrl;
    } catch {
      if (performance.now() > deadline) throw new Error(`no inspector on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    async heapAfterGc() {
      await send('HeapProfiler.collectGarbage');
      const evaluated = (await send('Runtime.evaluate', {
        expression:
          "JSON.stringify((({ used_heap_size, heap_size_limit }) => [used_heap_size, heap_size_limit])(process.getBuiltinModule('node:v8').getHeapStatistics()))",
        returnByValue: true,
      })) as { result: { value: string } };
      const [usedBytes, limitBytes] = JSON.parse(evaluated.result.value) as [number, number];
      return { usedBytes, limitBytes };
    },
    close: () => socket.close(),
  };
}
