import type { ConfigVariableName } from '../../src/config.js';
import { createHttpServer, type HttpServer } from '../../src/http/server.js';
import { gatewayConfig, type Harness } from './harness.js';
import { type Listening, listen } from './listen.js';

/** The settings of the listener itself (`Config['http']`): its timeouts and connection cap. */
export type ListenerVariable = Extract<ConfigVariableName, `HTTP_${string}`>;

/** One more production listener in front of a harness's gateway. */
export interface ExtraListener extends Omit<Listening, 'close'> {
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
  const open = new Set<Listening>();
  return {
    /**
     * A listener of the harness's gateway and WebSocket upgrade, with `http` for its settings
     * and the others as they ship (the harness's own listener is built from its env alone).
     */
    async listen(
      harness: Harness,
      http: Partial<Record<ListenerVariable, number>> = {},
    ): Promise<ExtraListener> {
      const config = gatewayConfig(http, {
        STATUS_BASE_URL: harness.simulator.statusBaseUrl,
        VERIFY_BASE_URL: harness.simulator.verifyBaseUrl,
      });
      const { server, drain } = createHttpServer(harness.gateway.listener, config.http, {
        upgrade: harness.gateway.upgrade,
      });
      const listening = await listen(server);
      open.add(listening);
      return { server, origin: listening.origin, port: listening.port, drain };
    },
    async close() {
      const listening = [...open];
      open.clear();
      await Promise.all(listening.map((one) => one.close()));
    },
  };
}
