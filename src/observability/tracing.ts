import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Attributes,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import type { TracingConfig } from '../config.js';
import { currentRequestScope } from './request-scope.js';

export type { Span } from '@opentelemetry/api';

const propagator = new W3CTraceContextPropagator();

/** How long `close` waits for the last export. */
const CLOSE_TIMEOUT_MS = 5_000;

/** Attribute values longer than this are cut: a client's user agent cannot grow a span. */
const MAX_ATTRIBUTE_LENGTH = 512;

/**
 * OpenTelemetry tracing of one gateway: the HTTP request, its GraphQL operation (parse, validate,
 * execute) and each upstream call, in the caller's trace when it sends a W3C `traceparent`, and
 * exported over OTLP/HTTP. The provider is the gateway's own, never registered globally, so that
 * two gateways in one process (the tests) each trace for themselves; spans find their parent
 * through the request's scope (`RequestScope.span`) rather than a global context manager.
 *
 * Spans carry names, routes, operation names and types, statuses and error codes: never a query
 * document, variables, headers or bodies, which may hold an apiKey.
 */
export function createTracing(options: TracingConfig & { readonly logger: Logger }) {
  const { logger } = options;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    sampler: samplerOf(options.sampler),
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH, attributeCountLimit: 32 },
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: reportingFailures(
          new OTLPTraceExporter({ url: options.tracesUrl, headers: { ...options.headers } }),
          logger,
        ),
        scheduledDelayMillis: options.exportDelayMs,
        exportTimeoutMillis: 10_000,
      }),
    ],
  });
  const tracer = provider.getTracer('ledger-status-gateway');

  /** A span under `parent`, by default the current request's. */
  const spanUnder = (name: string, options: SpanOptions, parent = currentRequestScope()?.span) =>
    tracer.startSpan(name, options, parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT);

  return {
    /**
     * Opens the server span of an HTTP request, continuing the caller's `traceparent`; it ends when
     * the answer has gone out (or the client went away).
     */
    requestSpan(req: IncomingMessage, res: ServerResponse, route: string): Span {
      const method = req.method ?? 'GET';
      const span = tracer.startSpan(
        `${method} ${route}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': method,
            'http.route': route,
            'url.path': route,
            'url.scheme': 'http',
            ...(req.headers['user-agent']
              ? { 'user_agent.original': req.headers['user-agent'] }
              : {}),
          },
        },
        propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter),
      );
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (!res.writableFinished) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away' });
        } else if (res.statusCode >= 500) {
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      });
      return span;
    },
    /** Opens a span under `parent`, or under the current request's span. */
    startSpan: (name: string, attributes: Attributes = {}, parent?: Span) =>
      spanUnder(name, { attributes }, parent),
    /** Opens the client span of an upstream call, under the current request's span. */
    upstreamSpan: (name: string, attributes: Attributes) =>
      spanUnder(name, { kind: SpanKind.CLIENT, attributes }),
    /** The `traceparent` (and `tracestate`) that carry `span` to an upstream. */
    headersFor(span: Span) {
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
      return headers;
    },
    /** Exports what is still buffered and stops. */
    async close() {
      // A collector that hangs must not hold the process's exit: what is not out by then is lost.
      let timer: NodeJS.Timeout | undefined;
      const givenUp = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      });
      await Promise.race([provider.shutdown().catch(() => {}), givenUp]);
      clearTimeout(timer);
    },
  };
}

export type Tracing = ReturnType<typeof createTracing>;

/** Marks a span failed with a message that is safe to export (no client input). */
export function failSpan(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** A W3C `traceparent`: version, trace id, parent id, flags; all-zero ids are invalid. */
const TRACEPARENT = /^[\da-f]{2}-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f]{2}$/;
const MAX_TRACESTATE_LENGTH = 512;

/**
 * The caller's trace headers, to pass on unchanged to the upstreams when tracing is off: the
 * upstream's spans then join the caller's trace. `undefined` without a valid `traceparent`.
 */
export function callerTraceHeaders(
  headers: IncomingMessage['headers'],
): Readonly<Record<string, string>> | undefined {
  const traceparent = headers.traceparent;
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined;
  const tracestate = headers.tracestate;
  return typeof tracestate === 'string' && tracestate.length <= MAX_TRACESTATE_LENGTH
    ? { traceparent, tracestate }
    : { traceparent };
}

function samplerOf({ parentBased, ratio }: TracingConfig['sampler']): Sampler {
  const root =
    ratio >= 1
      ? new AlwaysOnSampler()
      : ratio <= 0
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(ratio);
  return parentBased ? new ParentBasedSampler({ root }) : root;
}

/**
 * The exporter, logging when exports start and stop failing (once each, not per batch): the SDK
 * would otherwise report a collector that is down only to its own silent diagnostics.
 */
function reportingFailures(exporter: SpanExporter, logger: Logger): SpanExporter {
  let failing = false;
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        const failed = result.code !== 0;
        if (failed && !failing) {
          logger.warn(
            { err: result.error },
            'trace export failed; spans are dropped until it works',
          );
        } else if (!failed && failing) {
          logger.info('trace export works again');
        }
        failing = failed;
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: async () => exporter.forceFlush?.(),
  };
}
