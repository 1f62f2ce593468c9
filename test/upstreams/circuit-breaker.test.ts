import { describe, expect, it } from 'vitest';
import { CircuitBreaker, type CircuitState } from '../../src/upstreams/circuit-breaker.js';

function setUp() {
  let now = 0;
  const states: CircuitState[] = [];
  const breaker = new CircuitBreaker({
    failureThreshold: 3,
    cooldownMs: 1_000,
    now: () => now,
    onStateChange: (state) => states.push(state),
  });
  return { breaker, states, advance: (ms: number) => (now += ms) };
}

describe('CircuitBreaker', () => {
  it('opens after the threshold of consecutive failures and fails fast during the cool-down', () => {
    const { breaker, states, advance } = setUp();
    for (let i = 0; i < 2; i += 1) {
      expect(breaker.admit()).toBe(true);
      breaker.failed();
    }
    expect(breaker.state).toBe('closed');
    breaker.admit();
    breaker.failed();
    expect(breaker.state).toBe('open');
    expect(breaker.admit()).toBe(false);
    advance(400);
    expect(breaker.retryInMs).toBe(600);
    expect(breaker.admit()).toBe(false);
    expect(states).toEqual(['open']);
  });

  it('lets one probe through after the cool-down; success closes it', () => {
    const { breaker, states, advance } = setUp();
    for (let i = 0; i < 3; i += 1) {
      breaker.admit();
      breaker.failed();
    }
    advance(1_000);
    expect(breaker.admit()).toBe(true);
    expect(breaker.state).toBe('half-open');
    expect(breaker.admit()).toBe(false);
    breaker.succeeded();
    expect(breaker.state).toBe('closed');
    expect(breaker.admit()).toBe(true);
    expect(states).toEqual(['open', 'half-open', 'closed']);
  });

  it('opens again when the probe fails', () => {
    const { breaker, advance } = setUp();
    for (let i = 0; i < 3; i += 1) {
      breaker.admit();
      breaker.failed();
    }
    advance(1_000);
    breaker.admit();
    breaker.failed();
    expect(breaker.state).toBe('open');
    expect(breaker.retryInMs).toBe(1_000);
  });

  it('does not restart the cool-down for requests that fail after it opened', () => {
    const { breaker, states, advance } = setUp();
    for (let i = 0; i < 3; i += 1) breaker.admit();
    breaker.failed();
    breaker.failed();
    breaker.failed();
    advance(500);
    breaker.failed();
    breaker.failed();
    expect(breaker.retryInMs).toBe(500);
    expect(states).toEqual(['open']);
  });

  it('counts only consecutive failures', () => {
    const { breaker } = setUp();
    for (let i = 0; i < 10; i += 1) {
      breaker.admit();
      if (i % 2 === 0) breaker.failed();
      else breaker.succeeded();
    }
    expect(breaker.state).toBe('closed');
  });
});
