import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../../simulator/src/status-feed/fixture.js';
import { postIncidentUpdate } from '../../../simulator/src/status-feed/status-events.js';
import type { SimulatedFeed } from '../../../simulator/src/status-feed/types.js';
import { eventRecord, type StatusChangeEvent } from '../../../src/core/status/change-event.js';
import type { IncidentHistory, StatusSummary } from '../../../src/core/status/model.js';
import { buildIncidentHistory, buildSummary } from '../../../src/providers/statuspage-v2/build.js';
import {
  incidentHistoryChanges,
  summaryChanges,
} from '../../../src/providers/statuspage-v2/status-diff.js';
import { WireIncidentHistory, WireSummary } from '../../../src/providers/statuspage-v2/wire.js';
import { eventually } from '../../helpers/eventually.js';
import { type Harness, startHarness } from '../../helpers/harness.js';
import { subscribeSse } from '../../helpers/subscriptions.js';

/*
 * `incidents.json` holds a page's 50 most recently created incidents: an older one that is still
 * unresolved is in the summary and in no history. Its resolution is the summary's to report.
 */

type Raw = Record<string, unknown> & { incidents: Record<string, unknown>[] };
const fixture = (path: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8')) as Raw;
const summaryOf = (raw: unknown) => buildSummary(WireSummary.parse(raw)).snapshot;
const historyOf = (raw: unknown) => buildIncidentHistory(WireIncidentHistory.parse(raw)).snapshot;

const AT = new Date('2023-03-09T22:00:00.000Z');
/** The incident events of a diff, each once, as `KIND id`. */
const incidentEvents = (events: StatusChangeEvent[]) =>
  events.flatMap((event) =>
    event.type === 'incident' ? [`${event.kind} ${event.incident.id}`] : [],
  );

describe('an unresolved incident older than the history (status.twilio.com, 2023-03-09)', () => {
  const OLD = 'bpbjysk6s8nr';
  const rawSummary = fixture('real-feeds/twilio/summary.json');
  const rawHistory = fixture('real-history/twilio@2023-03-09/incidents.json');
  const before = summaryOf(rawSummary);
  const history = historyOf(rawHistory);
  // The page resolves it: Statuspage takes it out of the summary; the history, which never
  // listed it, stays as it was.
  const after = summaryOf({
    ...rawSummary,
    incidents: rawSummary.incidents.filter((incident) => incident.id !== OLD),
  });

  it('is in the summary and not in the history of the same run', () => {
    expect(before.incidentsById.get(OLD)?.status).toBe('INVESTIGATING');
    expect(before.incidentsById.get(OLD)?.updates).toHaveLength(15);
    expect(history.events).toHaveLength(50);
    expect(history.eventsById.has(OLD)).toBe(false);
  });

  it('is reported RESOLVED once, with its last copy, when it leaves the summary', () => {
    const events = summaryChanges(before, after, AT, { incidentHistory: history });
    expect(incidentEvents(events)).toEqual([`RESOLVED ${OLD}`]);
    const resolved = events.find((event) => event.type === 'incident');
    const last = before.incidentsById.get(OLD);
    if (!last) throw new Error('the summary lists it');
    expect(resolved?.type === 'incident' && resolved.incident).toEqual(eventRecord(last));
    // The history's loads before and after it, unchanged or not, report nothing of it.
    for (const summary of [before, after]) {
      expect(incidentEvents(incidentHistoryChanges(history, history, AT, { summary }))).toEqual([]);
    }
    const nextHistory = historyOf(rawHistory);
    expect(
      incidentEvents(incidentHistoryChanges(history, nextHistory, AT, { summary: after })),
    ).toEqual([]);
    // Nor does the summary's next load.
    expect(incidentEvents(summaryChanges(after, after, AT, { incidentHistory: history }))).toEqual(
      [],
    );
  });

  it('is reported whatever the history holds, even nothing', () => {
    const empty = historyOf({ ...rawHistory, incidents: [] });
    expect(incidentEvents(summaryChanges(before, after, AT, { incidentHistory: empty }))).toEqual([
      `RESOLVED ${OLD}`,
    ]);
    expect(incidentEvents(summaryChanges(before, after, AT, {}))).toEqual([`RESOLVED ${OLD}`]);
  });
});

/** The simulator's feed as the gateway builds it. */
function documentsOf(feed: SimulatedFeed): {
  summary: StatusSummary;
  incidentHistory: IncidentHistory;
} {
  const wire = (value: unknown) => JSON.parse(JSON.stringify(value));
  return {
    summary: summaryOf(wire(feed.summary)),
    incidentHistory: historyOf(wire(feed.incidentHistory)),
  };
}
const minutesLater = (minutes: number) => new Date(Date.now() + minutes * 60_000);

describe('an incident the history does not list', () => {
  it('newer than the history on hand: left to the history, which reports it once', () => {
    const feed = createSimulatedFeed();
    const start = documentsOf(feed);
    const id = postIncidentUpdate(
      feed,
      { name: 'Short outage', status: 'investigating' },
      minutesLater(1),
    );
    const opened = documentsOf(feed);
    postIncidentUpdate(feed, { id, status: 'resolved' }, minutesLater(2));
    const resolved = documentsOf(feed);
    // The summary sees it open, then gone, while the history on hand predates it.
    const fromSummary = summaryChanges(opened.summary, resolved.summary, AT, {
      incidentHistory: start.incidentHistory,
    });
    expect(incidentEvents(fromSummary)).toEqual([]);
    const fromHistory = incidentHistoryChanges(
      start.incidentHistory,
      resolved.incidentHistory,
      AT,
      resolved,
    );
    expect(incidentEvents(fromHistory)).toEqual([`RESOLVED ${id}`]);
  });

  it('pushed out of the history while unresolved, after the summary let it go: the history reports it once', () => {
    const feed = createSimulatedFeed();
    const [open] = feed.summary.incidents;
    if (!open) throw new Error('the demo feed has an open incident');
    const start = documentsOf(feed);
    expect(start.incidentHistory.eventsById.get(open.id)?.status).not.toBe('RESOLVED');
    // It leaves the summary while the history on hand lists it unresolved: left to the history.
    feed.summary.incidents = feed.summary.incidents.filter((incident) => incident.id !== open.id);
    const gone = documentsOf(feed);
    expect(
      incidentEvents(
        summaryChanges(start.summary, gone.summary, AT, { incidentHistory: start.incidentHistory }),
      ),
    ).toEqual([]);
    // The history's next load no longer lists it at all (newer incidents filled its 50).
    const history = feed.incidentHistory;
    if (!history) throw new Error('the demo feed has a history');
    history.incidents = history.incidents.filter((incident) => incident.id !== open.id);
    const pushedOut = documentsOf(feed);
    expect(
      incidentEvents(
        incidentHistoryChanges(start.incidentHistory, pushedOut.incidentHistory, AT, pushedOut),
      ),
    ).toEqual([`RESOLVED ${open.id}`]);
    expect(
      incidentEvents(
        incidentHistoryChanges(pushedOut.incidentHistory, pushedOut.incidentHistory, AT, pushedOut),
      ),
    ).toEqual([]);
    expect(
      incidentEvents(
        summaryChanges(gone.summary, pushedOut.summary, AT, {
          incidentHistory: pushedOut.incidentHistory,
        }),
      ),
    ).toEqual([]);
  });
});

describe('through the gateway, served the real documents', () => {
  let harness: Harness | undefined;
  afterEach(() => harness?.close());

  it('tells incidentChanged subscribers once that the incident older than the history resolved', async () => {
    const OLD = 'bpbjysk6s8nr';
    const summary = fixture('real-feeds/twilio/summary.json');
    const incidents = fixture('real-history/twilio@2023-03-09/incidents.json');
    harness = await startHarness({
      env: { STATUS_CACHE_TTL_MS: 100, STATUS_POLL_INTERVAL_MS: 100 },
      logLevel: 'warn',
    });
    const { simulator } = harness;
    simulator.setStatusFeed({
      summary,
      upcoming: { page: summary.page, scheduled_maintenances: [] },
      incidentHistory: incidents,
    } as unknown as SimulatedFeed);
    const HISTORY = '/status/api/v2/incidents.json';
    const changes = await subscribeSse<{
      incidentChanged: { kind: string; incident: { id: string; status: string } };
    }>(harness.origin, 'subscription { incidentChanged { kind incident { id status } } }');
    // The poller has loaded both documents as they are now, and again.
    const loaded = simulator.requestCount(HISTORY);
    await eventually(() => simulator.requestCount(HISTORY) >= loaded + 2);

    simulator.updateStatusFeed((feed) => {
      feed.summary.incidents = feed.summary.incidents.filter((incident) => incident.id !== OLD);
    });
    expect((await changes.next()).data?.incidentChanged).toEqual({
      kind: 'RESOLVED',
      incident: { id: OLD, status: 'INVESTIGATING' },
    });
    // Later loads of both documents report nothing more.
    const after = simulator.requestCount(HISTORY);
    await eventually(() => simulator.requestCount(HISTORY) >= after + 3);
    expect(changes.events).toHaveLength(1);
    await changes.close();
  });
});
