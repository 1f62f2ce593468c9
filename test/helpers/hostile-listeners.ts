import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ConfigVariableName, loadConfig } from '../../src/config.js';
import { createHttpServer, type HttpServer } from '../../src/http/server.js';
import type { Harness } from './harness.js';

/** The settings of the listener itself (`Config['http']`): its timeouts and connection cap. */
export type ListenerVariable = Extract<ConfigVariableName, `HTTP_${string}`>;

/** One more production listener in front of a harness's gateway. */
export interface ExtraListener {
  readonly server: Server;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly port: number;
  /** Drains this listener as `main.ts` does on SIGTERM; the gateway behind it goes on. */
  readonly drain: HttpServer['drain'];
}

/**
 * More production listeners (`createHttpServer`, as `main.ts` builds it) in front of a harness's
 * gateway, each on a port of its own: for a test that drains its listener (a drained one takes no
 * more connections), that counts its connections without another test's keep-alive leftovers, or
 * that needs the listener's own `HTTP_*` settings, while the file shares one gateway and
 * simulator. `close()` (after each test) closes every one opened since.
 */
export function extraListeners() {
  const open = new Set<Server>();
  return {
    /**
     * A listener of the harness's gateway and WebSocket upgrade, with `http` for its settings
     * and the others as they ship (the harness's own listener is built from its env alone).
     */
    async listen(
      harness: Harness,
      http: Partial<Record<ListenerVariable, number>> = {},
    ): Promise<ExtraListener> {
      const config = loadConfig({
        NODE_ENV: 'test',
        STATUS_BASE_URL: harness.simulator.statusBaseUrl,
        VERIFY_BASE_URL: harness.simulator.verifyBaseUrl,
        ...Object.fromEntries(Object.entries(http).map(([name, value]) => [name, String(value)])),
      });
      const { server, drain } = createHttpServer(harness.gateway.listener, config.http, {
        upgrade: harness.gateway.upgrade,
      });
      open.add(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      return { server, origin: `http://127.0.0.1:${port}`, port, drain };
    },
    async close() {
      const servers = [...open];
      open.clear();
      await Promise.all(
        servers.map(async (server) => {
          const closed = server.listening
            ? new Promise<void>((resolve) => server.close(() => resolve()))
            : undefined;
          server.closeAllConnections();
          await closed;
        }),
      );
    },
  };
}
