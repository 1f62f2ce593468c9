import { describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../../simulator/src/status-feed/fixture.js';
import { componentRecord } from '../../../src/core/status/change-event.js';
import { shownEvent } from '../../../src/core/status/change-evidence.js';
import { buildSummary } from '../../../src/providers/statuspage-v2/build.js';
import { WireSummary } from '../../../src/providers/statuspage-v2/wire.js';

/** The summary as the gateway builds it from what the simulator serves, and one of its components. */
function summary() {
  const feed = createSimulatedFeed({ now: new Date('2026-11-26T12:00:00Z') });
  const snapshot = buildSummary(
    WireSummary.parse(JSON.parse(JSON.stringify(feed.summary))),
  ).snapshot;
  const [component] = snapshot.componentsById.values();
  if (!component) throw new Error('the simulated summary has no component');
  return { snapshot, component };
}

/** A component event another replica published, saying its component was `previousStatus` before. */
function componentEvent(previousStatus: string) {
  const { snapshot, component } = summary();
  const event = {
    type: 'component' as const,
    detectedAt: '2026-11-26T12:00:01.000Z',
    component: componentRecord(component),
    previousStatus,
    status: component.status,
  };
  return { snapshot, event };
}

describe("another replica's component event, on a replica with no snapshot before it", () => {
  it('is passed on from a status this gateway maps to UNKNOWN', () => {
    const { snapshot, event } = componentEvent('UNKNOWN');
    expect(shownEvent(event, snapshot, undefined)).toEqual(event);
  });

  it('is dropped when its previous status is no status at all', () => {
    const { snapshot, event } = componentEvent('ON_FIRE');
    expect(shownEvent(event, snapshot, undefined)).toBeUndefined();
  });
});
