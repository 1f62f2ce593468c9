import { createServer } from 'node:http';
import { eventually } from './eventually.js';
import { listen } from './listen.js';

/** A span as an OTLP/HTTP JSON export carries it, with its attributes as a plain object. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly status: { code?: number; message?: string };
  readonly serviceName: unknown;
}

export interface OtlpReceiver {
  /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Every export body as it arrived, to search for what must never be exported. */
  readonly bodies: string[];
  /** The `authorization` header of each export, as the exporter sent it. */
  readonly authorizations: (string | undefined)[];
  /** Resolves once spans matching `predicate` have arrived (polling, up to `timeoutMs`). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: OtlpValue }[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

const otlpValue = (value: OtlpValue): unknown =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
  value.boolValue ??
  value.doubleValue ??
  value.arrayValue?.values?.map(otlpValue);

const attributesOf = (list: { key: string; value: OtlpValue }[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, otlpValue(value)]));

/**
 * A local OpenTelemetry collector for tests: takes OTLP/HTTP JSON exports on `POST /v1/traces`
 * over loopback and keeps their spans.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      authorizations.push(req.headers.authorization);
      const exported = JSON.parse(body) as OtlpExport;
      for (const resourceSpans of exported.resourceSpans ?? []) {
        const serviceName = attributesOf(resourceSpans.resource?.attributes)['service.name'];
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              status: span.status ?? {},
              serviceName,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const listening = await listen(server);
  return {
    endpoint: listening.origin,
    spans,
    bodies,
    authorizations,
    async waitFor(predicate, timeoutMs = 5_000) {
      await eventually(() => predicate(spans), { timeoutMs }).catch(() => {
        throw new Error(
          `the spans expected did not arrive; got ${spans.map((span) => span.name).join(', ')}`,
        );
      });
    },
    close: () => listening.close(),
  };
}
