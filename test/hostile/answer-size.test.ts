import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSimulatedFeed,
  STATUS_FEED_PRESETS,
} from '../../simulator/src/status-feed/fixture.js';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { withOwnPages } from '../helpers/own-pages.js';

// Under every static limit (depth 12, cost under 5,000), but every level multiplies by the feed.
const NESTED = `{ statusPage { components { children { group { children { group { children {
  group { children { name } } } } } } } } } }`;

/** A page whose first incident lists one component 20,000 times. */
const REPEATED = 'repeated';
/** A page no test has read, so that its read goes to the feed. */
const SLOW = 'slow';

/*
 * Two gateways: the limits as they ship, for the largest answers the gateway is built for (the
 * page tree of a vendor's realistic page, the default one here, and a page of its own whose
 * incident repeats a component); and MAX_ANSWER_BYTES of 2,000 with MAX_EXECUTION_MS of 200,
 * which those answers would be over.
 */
let shipped: Harness;
let tight: Harness;
/** The feed of page `REPEATED`; its first incident lists `component` 20,000 times. */
const repeated = createSimulatedFeed();
const incident = repeated.summary.incidents[0];
const component = incident?.components[0];
beforeAll(async () => {
  if (!incident || !component) throw new Error('the demo feed has an incident');
  incident.components = Array.from({ length: 20_000 }, () => structuredClone(component));
  [shipped, tight] = await Promise.all([
    startHarness({
      simulator: { statusFeed: createSimulatedFeed(STATUS_FEED_PRESETS.realistic) },
      ...withOwnPages({ [REPEATED]: repeated }),
    }),
    startHarness({
      ...withOwnPages(
        { [SLOW]: createSimulatedFeed() },
        { env: { MAX_ANSWER_BYTES: 2_000, MAX_EXECUTION_MS: 200, VERIFY_WAIT_MS: 100 } },
      ),
    }),
  ]);
});
afterEach(() => tight.simulator.clearFaults());
afterAll(() => Promise.all([shipped?.close(), tight?.close()]));

describe('answers that would multiply with the feed', () => {
  it('stops an operation past MAX_RESOLVED_FIELDS with one error, and keeps serving', async () => {
    const harness = shipped;
    const response = await harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: NESTED }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    const body = JSON.parse(text) as { data?: unknown; errors: { extensions: unknown }[] };
    expect(body.data).toBeUndefined();
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]?.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      limit: 'MAX_RESOLVED_FIELDS',
    });
    // One short error instead of the 100 MB answer the red team measured.
    expect(text.length).toBeLessThan(1_000);
    expect((await harness.fetch('/health')).status).toBe(200);
    // The page tree, the largest query the gateway is built for, still goes through.
    const tree = await harness.execute(PAGE_TREE_QUERY);
    expect(tree.body.errors).toBeUndefined();
  });

  it('describes a component listed 20,000 times by an incident once', async () => {
    const harness = shipped;
    const logged = harness.logs.length;
    const { body } = await harness.execute<{
      statusPage: {
        incidents: { components: { incidents: { components: { id: string }[] }[] }[] }[];
      };
    }>(
      `{ statusPage(slug: "${REPEATED}") { incidents { components { incidents { components { id } } } } } }`,
    );
    expect(body.errors).toBeUndefined();
    const first = body.data?.statusPage.incidents[0];
    expect(first?.components).toHaveLength(1);
    expect(first?.components[0]?.incidents[0]?.components).toEqual([{ id: component?.id }]);
    expect(
      harness.logs.slice(logged).find((line) => line.msg === 'status feed items left out')
        ?.problems,
    ).toEqual(['incidents[0].components: 19999 repeated ids left out']);
  });

  it('stops an answer past MAX_ANSWER_BYTES of text with one error', async () => {
    const harness = tight;
    // The page read first, within MAX_EXECUTION_MS however busy the machine: the answer is what
    // is over a limit here.
    await eventually(
      async () => (await harness.execute('{ statusPage { name } }')).body.errors === undefined,
    );
    const aliases = Array.from({ length: 20 }, (_, i) => `b${i}: body`).join(' ');
    const { body } = await harness.execute(
      `{ statusPage { incidents { updates { ${aliases} } } } }`,
    );
    expect(body.data).toBeUndefined();
    expect(body.errors?.map((error) => error.extensions)).toEqual([
      { code: 'BAD_USER_INPUT', limit: 'MAX_ANSWER_BYTES' },
    ]);
    expect((await harness.execute('{ statusPage { name } }')).body.errors).toBeUndefined();
  });

  it('stops an operation past MAX_EXECUTION_MS with one error', async () => {
    const harness = tight;
    // The upstream answers after the deadline: the fields after it are not built.
    harness.simulator.setFault('status', '*', { kind: 'delay', ms: 400 });
    const { body } = await harness.execute(
      `{ statusPage(slug: "${SLOW}") { name components { name } } }`,
    );
    expect(body.data).toBeUndefined();
    expect(body.errors?.map((error) => error.extensions)).toEqual([
      { code: 'BAD_USER_INPUT', limit: 'MAX_EXECUTION_MS' },
    ]);
  });
});
