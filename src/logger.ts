import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';

/**
 * The gateway's structured log: one JSON object a line on stdout. Anything that could carry a
 * secret is redacted at this single point as a second line of defence.
 */
export function createLogger(level: LevelWithSilent, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'ledger-status-gateway' },
      redact: {
        paths: [
          'apiKey',
          '*.apiKey',
          '*.*.apiKey',
          'req.headers.cookie',
          'req.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
