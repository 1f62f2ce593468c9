import { z } from 'zod';
import { env, flag, fraction, httpUrl, list, oneOf, wholeNumber } from './variable.js';

/** `key=value` pairs separated by commas, values URL-encoded (the OTLP exporter's headers). */
const keyValueList = list(
  z.string().transform((item, context): [string, string] => {
    const at = item.indexOf('=');
    const key = at > 0 ? item.slice(0, at).trim() : '';
    if (key === '') {
      context.addIssue({ code: 'custom', message: 'must be a list of key=value pairs' });
      return z.NEVER;
    }
    try {
      return [key, decodeURIComponent(item.slice(at + 1).trim())];
    } catch {
      context.addIssue({ code: 'custom', message: 'has a value that is not URL-encoded' });
      return z.NEVER;
    }
  }),
).transform((pairs) => Object.fromEntries(pairs));

/** Metrics, and OpenTelemetry tracing over OTLP/HTTP: on when an endpoint is set, unless disabled. */
export const Observability = z
  .object({
    metricsPort: env('METRICS_PORT', wholeNumber(0, 65_535), {
      unset: '`/metrics` on `PORT`',
      description:
        'Serve `/metrics` on this port alone (bound to `HOST`), off the API port, so that only the scraper reaches it. Set it to the API port or leave it unset to serve `/metrics` beside `/graphql`.',
    }),
    tracing: z
      .object({
        endpoint: env('OTEL_EXPORTER_OTLP_ENDPOINT', httpUrl(), {
          unset: 'no tracing',
          description:
            'OTLP/HTTP collector base URL; traces are sent to `<url>/v1/traces`. Setting it (or the next variable) turns tracing on.',
        }),
        tracesUrl: env(
          'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
          z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
          {
            unset: '`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
            description: 'Full OTLP/HTTP URL for traces, used as written; wins over the base URL.',
          },
        ),
        headers: env('OTEL_EXPORTER_OTLP_HEADERS', keyValueList, {
          default: '',
          description:
            'Headers sent with each export, as `key=value` pairs separated by commas (values URL-encoded). They often carry a token: never logged.',
        }),
        serviceName: env('OTEL_SERVICE_NAME', z.string(), {
          default: 'ledger-status-gateway',
          description: '`service.name` of every span.',
        }),
        sampler: z
          .object({
            name: env(
              'OTEL_TRACES_SAMPLER',
              oneOf([
                'always_on',
                'always_off',
                'traceidratio',
                'parentbased_always_on',
                'parentbased_always_off',
                'parentbased_traceidratio',
              ]),
              {
                default: 'parentbased_always_on',
                description:
                  "Which traces are recorded: `parentbased_always_on` follows the caller's `traceparent` decision and samples the rest; `traceidratio` variants keep `OTEL_TRACES_SAMPLER_ARG` of them.",
              },
            ),
            ratio: env('OTEL_TRACES_SAMPLER_ARG', fraction, {
              default: '1',
              description: 'The ratio of traces the `traceidratio` samplers keep.',
            }),
          })
          .transform(({ name, ratio }) => ({
            parentBased: name.startsWith('parentbased_'),
            ratio: name.endsWith('always_on') ? 1 : name.endsWith('always_off') ? 0 : ratio,
          })),
        exportDelayMs: env('OTEL_BSP_SCHEDULE_DELAY', wholeNumber(1, 60_000), {
          default: '5000',
          description:
            'Milliseconds between two exports of finished spans (at most 2,048 wait; more are dropped, never held in memory).',
        }),
        disabled: env('OTEL_SDK_DISABLED', flag, {
          default: 'false',
          description: 'Turn tracing off even when an exporter endpoint is set.',
        }),
      })
      .transform(
        ({ endpoint, tracesUrl = endpoint && `${endpoint}/v1/traces`, disabled, ...tracing }) =>
          tracesUrl === undefined || disabled ? undefined : { ...tracing, tracesUrl },
      ),
  })
  .meta({ title: 'Observability' });
