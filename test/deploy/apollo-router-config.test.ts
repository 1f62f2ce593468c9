import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SESSION_COOKIE } from '../../deploy/gateway.config.js';

const routerConfig = parse(readFileSync('deploy/apollo-router/router.yaml', 'utf8')) as {
  rhai?: { scripts?: string; main?: string };
  telemetry?: {
    exporters?: {
      tracing?: {
        otlp?: { enabled?: boolean; protocol?: string };
        propagation?: { trace_context?: boolean };
        common?: { parent_based_sampler?: boolean };
      };
    };
  };
};
const script = readFileSync('deploy/apollo-router/rhai/main.rhai', 'utf8');
const supergraph = readFileSync('supergraph.graphql', 'utf8');

/*
 * No Apollo Router binary can be installed here (only the npm registry and Debian's packages are
 * reachable), so its configuration is checked against what it must agree with rather than run.
 */
describe('deploy/apollo-router', () => {
  it('loads the Rhai script the configuration names', () => {
    expect(routerConfig.rhai).toEqual({ scripts: './rhai', main: 'main.rhai' });
  });

  // SESSION_COOKIE is the name the Hive Gateway relay test proves against the running gateway.
  it('relays the cookie the gateway sets, to and from the subgraph the supergraph names', () => {
    const [, subgraphName] = /@join__graph\(name: "([^"]+)"/.exec(supergraph) ?? [];
    expect(subgraphName).toBe('ledger-status');
    expect(script).toContain(`if subgraph != "${subgraphName}"`);
    expect(script).toContain(`pair.starts_with("${SESSION_COOKIE}=")`);
    expect(script).toContain(`value.starts_with("${SESSION_COOKIE}=")`);
    // Both directions: the client's cookie to the subgraph request, Set-Cookie back on the answer.
    expect(script).toContain('request.subgraph.headers["cookie"] = kept');
    expect(script).toContain('response.headers["set-cookie"] = response.context[');
  });

  it('propagates W3C trace context to subgraphs, letting a caller decide on sampling', () => {
    const tracing = routerConfig.telemetry?.exporters?.tracing;
    expect(tracing?.otlp).toMatchObject({ enabled: true, protocol: 'http' });
    expect(tracing?.propagation?.trace_context).toBe(true);
    expect(tracing?.common?.parent_based_sampler).toBe(true);
  });
});
