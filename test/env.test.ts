import { describe, expect, it } from 'vitest';
import { EnvironmentError, parseEnvironment } from '../src/env.js';

describe('parseEnvironment', () => {
  it('applies the documented defaults', () => {
    expect(parseEnvironment({})).toEqual({
      PORT: 4000,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      STATUS_CACHE_TTL_MS: 10_000,
      STATUS_MAX_STALE_MS: 300_000,
      UPSTREAM_TIMEOUT_MS: 5_000,
      UPSTREAM_RETRIES: 2,
      VERIFY_API: 'session',
      VERIFY_WAIT_MS: 20_000,
      VERIFY_CHAINS_TTL_MS: 3_600_000,
      CIRCUIT_FAILURE_THRESHOLD: 5,
      CIRCUIT_COOLDOWN_MS: 30_000,
      MAX_BODY_BYTES: 262_144,
      MAX_DEPTH: 12,
      MAX_ALIASES: 30,
      MAX_COST: 5_000,
      MAX_TOKENS: 2_000,
      MAX_DIRECTIVES: 20,
      CORS_ORIGINS: [],
    });
  });

  it('reads the upstreams and trims a trailing slash', () => {
    const env = parseEnvironment({
      STATUS_BASE_URL: 'https://status.hedera.com/api/v2/',
      VERIFY_BASE_URL: 'https://verify.example.com/server',
      HOST: '127.0.0.1',
      PORT: '8080',
    });
    expect(env.STATUS_BASE_URL).toBe('https://status.hedera.com/api/v2');
    expect(env.VERIFY_BASE_URL).toBe('https://verify.example.com/server');
    expect(env.PORT).toBe(8080);
    expect(Object.isFrozen(env)).toBe(true);
  });

  it('treats empty values as unset', () => {
    expect(parseEnvironment({ STATUS_BASE_URL: '', PORT: ' ' }).STATUS_BASE_URL).toBeUndefined();
  });

  it('reports every problem together', () => {
    let caught: unknown;
    try {
      parseEnvironment({
        PORT: 'eighty',
        STATUS_BASE_URL: 'status.hedera.com',
        VERIFY_BASE_URL: 'ftp://example.com',
        STATUS_CACHE_TTL_MS: '-5',
        UPSTREAM_TIMEOUT_MS: '1.5',
        LOG_LEVEL: 'chatty',
        SESSION_COOKIE_SECURE: 'yes',
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EnvironmentError);
    expect((caught as EnvironmentError).problems).toEqual([
      'PORT must be a number',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      'STATUS_BASE_URL is not an http(s) URL',
      'VERIFY_BASE_URL is not an http(s) URL',
      'STATUS_CACHE_TTL_MS must be at least 0',
      'UPSTREAM_TIMEOUT_MS must be a whole number',
      'SESSION_COOKIE_SECURE must be true or false',
    ]);
  });

  it('reads CORS origins as a list', () => {
    expect(
      parseEnvironment({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' })
        .CORS_ORIGINS,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(() => parseEnvironment({ CORS_ORIGINS: 'app.example.com' })).toThrow(
      'CORS_ORIGINS must be a comma-separated list of http(s) origins',
    );
  });

  it('insists that the status feed URL is the v2 API', () => {
    expect(() => parseEnvironment({ STATUS_BASE_URL: 'https://status.hedera.com' })).toThrow(
      'STATUS_BASE_URL must end in /api/v2',
    );
  });
});
