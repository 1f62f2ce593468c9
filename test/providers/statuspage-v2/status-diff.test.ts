import { describe, expect, it } from 'vitest';
import {
  createSimulatedFeed,
  type SimulatedFeed,
} from '../../../simulator/src/status-feed/fixture.js';
import {
  postIncidentUpdate,
  postMaintenanceUpdate,
} from '../../../simulator/src/status-feed/status-events.js';
import { setComponentStatuses } from '../../../simulator/src/status-feed/status-rollup.js';
import {
  eventOf,
  eventRecord,
  type StatusChangeEvent,
} from '../../../src/core/status/change-event.js';
import type { Component } from '../../../src/core/status/model.js';
import {
  buildIncidentHistory,
  buildMaintenanceHistory,
  buildSummary,
  buildUpcoming,
} from '../../../src/providers/statuspage-v2/build.js';
import {
  incidentHistoryChanges,
  maintenanceHistoryChanges,
  summaryChanges,
  upcomingChanges,
} from '../../../src/providers/statuspage-v2/status-diff.js';
import {
  WireIncidentHistory,
  WireMaintenanceHistory,
  WireSummary,
  WireUpcoming,
} from '../../../src/providers/statuspage-v2/wire.js';

/** The feed's documents as the gateway builds them from what the simulator serves. */
function documentsOf(feed: SimulatedFeed) {
  const wire = (value: unknown) => JSON.parse(JSON.stringify(value));
  return {
    summary: buildSummary(WireSummary.parse(wire(feed.summary))).snapshot,
    upcoming: buildUpcoming(WireUpcoming.parse(wire(feed.upcoming))).snapshot,
    incidentHistory: buildIncidentHistory(WireIncidentHistory.parse(wire(feed.incidentHistory)))
      .snapshot,
    maintenanceHistory: buildMaintenanceHistory(
      WireMaintenanceHistory.parse(wire(feed.maintenanceHistory)),
    ).snapshot,
  };
}

const AT = new Date('2026-11-20T14:00:00.000Z');
const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);
const kinds = (events: StatusChangeEvent[]) =>
  events.map((event) => ('kind' in event ? `${event.type}:${event.kind}` : event.type));

function setUp() {
  const feed = createSimulatedFeed();
  const leaf = (group: string, name: string) => {
    const parent = feed.summary.components.find((c) => c.group && c.name === group);
    const found = feed.summary.components.find((c) => c.group_id === parent?.id && c.name === name);
    if (!found || !parent) throw new Error(`no ${group} › ${name}`);
    return { id: found.id, groupId: parent.id };
  };
  return { feed, leaf, before: documentsOf(feed) };
}

describe('summaryChanges', () => {
  it('finds nothing between two loads of an unchanged feed', () => {
    const { feed, before } = setUp();
    const after = documentsOf(feed);
    expect(summaryChanges(before.summary, after.summary, AT, after)).toEqual([]);
  });

  it("reports a component's status change, its group's, and the page", () => {
    const { feed, leaf, before } = setUp();
    const relay = leaf('Mainnet', 'JSON-RPC Relay');
    setComponentStatuses(feed, { [relay.id]: 'major_outage' }, later(1));
    const after = documentsOf(feed);
    const events = summaryChanges(before.summary, after.summary, AT, after);
    expect(kinds(events)).toEqual(['page', 'component', 'component']);
    const component = events.find((e) => e.type === 'component' && e.component.id === relay.id);
    const group = events.find((e) => e.type === 'component' && e.component.id === relay.groupId);
    expect(component).toMatchObject({
      type: 'component',
      component: { id: relay.id, groupId: relay.groupId, status: 'MAJOR_OUTAGE' },
      previousStatus: 'OPERATIONAL',
      status: 'MAJOR_OUTAGE',
      detectedAt: AT.toISOString(),
    });
    expect(group).toMatchObject({ component: { groupId: null }, status: 'MAJOR_OUTAGE' });
    // Plain JSON: what went in comes out of a round trip through a bus.
    expect(JSON.parse(JSON.stringify(events))).toEqual(events);
  });

  it('reports a new incident CREATED and a new update UPDATED', () => {
    const { feed, leaf, before } = setUp();
    const id = postIncidentUpdate(
      feed,
      {
        name: 'Relay errors',
        status: 'investigating',
        components: { [leaf('Testnet', 'JSON-RPC Relay').id]: 'partial_outage' },
      },
      later(1),
    );
    const created = documentsOf(feed);
    expect(kinds(summaryChanges(before.summary, created.summary, AT, created))).toEqual([
      'page',
      'component',
      'component',
      'incident:CREATED',
    ]);
    postIncidentUpdate(feed, { id, status: 'identified', body: 'Found it.' }, later(2));
    const updated = documentsOf(feed);
    const events = summaryChanges(created.summary, updated.summary, AT, updated);
    expect(kinds(events)).toEqual(['page', 'incident:UPDATED']);
    expect(events[1]).toMatchObject({ incident: { id, status: 'IDENTIFIED' } });
  });

  it('reports an incident that leaves the unresolved list RESOLVED, with the history copy', () => {
    const { feed, before } = setUp();
    const [open] = before.summary.incidents;
    postIncidentUpdate(feed, { id: open?.id, status: 'resolved', body: 'Over.' }, later(1));
    const after = documentsOf(feed);
    const events = summaryChanges(before.summary, after.summary, AT, after);
    expect(kinds(events)).toContain('incident:RESOLVED');
    const resolved = events.find((event) => event.type === 'incident');
    expect(resolved).toMatchObject({ incident: { id: open?.id, status: 'RESOLVED' } });
    expect(resolved?.type === 'incident' && resolved.incident.resolvedAt).toBeTruthy();
  });

  it('leaves RESOLVED to the history when the history on hand does not show it yet, and the history reports it once', () => {
    const { feed, before } = setUp();
    const [open] = before.summary.incidents;
    postIncidentUpdate(feed, { id: open?.id, status: 'resolved' }, later(1));
    const after = documentsOf(feed);
    // The summary is refetched first: the history on hand is the old one.
    const fromSummary = summaryChanges(before.summary, after.summary, AT, before);
    expect(kinds(fromSummary)).not.toContain('incident:RESOLVED');
    const fromHistory = incidentHistoryChanges(
      before.incidentHistory,
      after.incidentHistory,
      AT,
      after,
    );
    expect(kinds(fromHistory)).toEqual(['page', 'incident:RESOLVED']);
    // The other order: the history is refetched first, while the summary on hand still lists it.
    expect(
      kinds(incidentHistoryChanges(before.incidentHistory, after.incidentHistory, AT, before)),
    ).toEqual(['page']);
    expect(kinds(summaryChanges(before.summary, after.summary, AT, after))).toContain(
      'incident:RESOLVED',
    );
  });

  it('reports RESOLVED at once, with the last copy, when the feed serves no history', () => {
    const { feed, before } = setUp();
    const [open] = before.summary.incidents;
    postIncidentUpdate(feed, { id: open?.id, status: 'resolved' }, later(1));
    const after = documentsOf(feed);
    const events = summaryChanges(before.summary, after.summary, AT, { upcoming: after.upcoming });
    expect(events.find((event) => event.type === 'incident')).toMatchObject({
      kind: 'RESOLVED',
      incident: { id: open?.id, status: open?.status },
    });
  });

  it('reports a maintenance STARTED, then COMPLETED with its history copy', () => {
    const { feed, before } = setUp();
    const scheduled = before.summary.maintenances.find((m) => m.status === 'SCHEDULED');
    postMaintenanceUpdate(feed, { id: scheduled?.id, status: 'in_progress' }, later(1));
    const started = documentsOf(feed);
    const startEvents = summaryChanges(before.summary, started.summary, AT, started);
    expect(startEvents.filter((e) => e.type === 'maintenance')).toMatchObject([
      { kind: 'STARTED', maintenance: { id: scheduled?.id, status: 'IN_PROGRESS' } },
    ]);
    expect(kinds(upcomingChanges(before.upcoming, started.upcoming, AT, started))).toEqual([
      'page',
    ]);

    postMaintenanceUpdate(feed, { id: scheduled?.id, status: 'completed' }, later(2));
    const completed = documentsOf(feed);
    const endEvents = summaryChanges(started.summary, completed.summary, AT, completed);
    expect(endEvents.filter((e) => e.type === 'maintenance')).toMatchObject([
      { kind: 'COMPLETED', maintenance: { id: scheduled?.id, status: 'COMPLETED' } },
    ]);
    // Had the history been refetched first, the summary on hand would still list it: no repeat.
    expect(
      kinds(
        maintenanceHistoryChanges(
          started.maintenanceHistory,
          completed.maintenanceHistory,
          AT,
          started,
        ),
      ),
    ).toEqual(['page']);
  });

  it('reports a new maintenance SCHEDULED once, by whichever document shows it first', () => {
    const { feed, leaf, before } = setUp();
    postMaintenanceUpdate(
      feed,
      {
        name: 'Explorer upgrade',
        status: 'scheduled',
        componentIds: [leaf('Mainnet', 'Network Explorer').id],
      },
      later(1),
    );
    const after = documentsOf(feed);
    const summaryFirst = summaryChanges(before.summary, after.summary, AT, before);
    const upcomingSecond = upcomingChanges(before.upcoming, after.upcoming, AT, after);
    const upcomingFirst = upcomingChanges(before.upcoming, after.upcoming, AT, before);
    const summarySecond = summaryChanges(before.summary, after.summary, AT, after);
    const scheduled = (events: StatusChangeEvent[]) =>
      events.filter((e) => e.type === 'maintenance' && e.kind === 'SCHEDULED').length;
    expect(scheduled(summaryFirst) + scheduled(upcomingSecond)).toBe(1);
    expect(scheduled(upcomingFirst) + scheduled(summarySecond)).toBe(1);
  });

  it('finds nothing in a load that changed nothing, after a change was reported', () => {
    const { feed, leaf } = setUp();
    setComponentStatuses(
      feed,
      { [leaf('Previewnet', 'Network Explorer').id]: 'degraded_performance' },
      later(1),
    );
    const first = documentsOf(feed);
    const second = documentsOf(feed);
    expect(summaryChanges(first.summary, second.summary, AT, second)).toEqual([]);
    expect(upcomingChanges(first.upcoming, second.upcoming, AT, second)).toEqual([]);
    expect(
      incidentHistoryChanges(first.incidentHistory, second.incidentHistory, AT, second),
    ).toEqual([]);
    expect(
      maintenanceHistoryChanges(first.maintenanceHistory, second.maintenanceHistory, AT, second),
    ).toEqual([]);
  });
});

describe('change records', () => {
  it('give back the incident they were made of', () => {
    const { before } = setUp();
    expect(before.incidentHistory.events.length).toBeGreaterThan(0);
    for (const incident of before.incidentHistory.events) {
      const back = eventOf(JSON.parse(JSON.stringify(eventRecord(incident))));
      expect(back).toEqual({
        ...incident,
        components: incident.components.map(
          ({ groupId: _, ...c }: Component & { groupId?: string }) => ({
            ...c,
            group: null,
            children: [],
            incidents: [],
            maintenances: [],
          }),
        ),
      });
    }
  });
});
