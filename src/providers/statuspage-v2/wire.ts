import { z } from 'zod';
import { lenient, optionalText, optionalTimestamp, timestamp } from '../../core/wire-fields.js';

/*
 * The status feed as it arrives (Statuspage v2), validated at the boundary.
 *
 * The outer documents are checked whole: a body without a page is not the feed. List items are
 * only required to be lists here and are validated one by one while the snapshot is built, so
 * that one malformed incident leaves the rest of the page standing.
 */

/**
 * An http(s) URL, kept as the feed wrote it. No other scheme: these are links a page shows, and a
 * `javascript:` or `data:` one would run in its reader's browser.
 */
const httpUrl = z.url({ protocol: /^https?$/ });

/** Absent, null, not a URL or not http(s): null, the rest of the item standing. */
const optionalUrl = lenient(httpUrl, null);

const flag = lenient(z.boolean(), false);

/** A status-like string; values outside the known sets are mapped to `UNKNOWN` later. */
const state = lenient(z.string(), '');

/**
 * A calendar date as Statuspage writes `start_date` (`2023-07-11`), kept as the date it names: it
 * is not an instant, and read as one it would show the previous day west of UTC. A date-time is
 * cut to the date it was written with; anything else is null.
 */
const calendarDate = lenient(
  z.string().transform((value) => {
    const date = /^(\d{4})-(\d{2})-(\d{2})(?:$|T)/.exec(value);
    if (!date) return null;
    const [, year, month, day] = date.map(Number) as [number, number, number, number];
    const parsed = new Date(Date.UTC(year, month - 1, day));
    return parsed.getUTCMonth() === month - 1 && parsed.getUTCDate() === day
      ? `${date[1]}-${date[2]}-${date[3]}`
      : null;
  }),
  null,
);

/** `reminder_intervals`: hours before a maintenance when subscribers are reminded. Real pages send
 * it as a JSON string (`"[3, 6]"`), some as an array; absent or unreadable, null. */
const reminderIntervals = lenient(
  z.union([z.string(), z.array(z.unknown())]).transform((value) => {
    let list: unknown = value;
    if (typeof value === 'string') {
      try {
        list = JSON.parse(value);
      } catch {
        return null;
      }
    }
    return Array.isArray(list) && list.every((item) => Number.isInteger(item))
      ? (list as number[])
      : null;
  }),
  null,
);

/** A list that may come as `null`, or be missing; its items are checked later, one by one. */
const list = z
  .array(z.unknown())
  .nullish()
  .transform((value) => value ?? []);

export const WirePage = z.object({
  id: z.string().min(1),
  name: z.string(),
  url: httpUrl,
  time_zone: optionalText,
  updated_at: timestamp,
});

export const WireComponent = z.object({
  id: z.string().min(1),
  name: z.string(),
  status: state,
  description: optionalText,
  position: lenient(z.number().int(), 0),
  showcase: flag,
  only_show_if_degraded: flag,
  group: flag,
  group_id: optionalText,
  start_date: calendarDate,
  created_at: timestamp,
  updated_at: timestamp,
});

export const WireAffectedComponent = z.object({
  code: z.string().min(1),
  name: optionalText,
  old_status: state,
  new_status: state,
});

export const WireIncidentUpdate = z.object({
  id: z.string().min(1),
  status: state,
  body: optionalText,
  created_at: timestamp,
  updated_at: timestamp,
  display_at: optionalTimestamp,
  affected_components: list,
  deliver_notifications: lenient(z.boolean(), null),
  tweet_id: lenient(z.union([z.string(), z.number().transform(String)]), null),
  custom_tweet: optionalText,
});

export const WireIncident = z.object({
  id: z.string().min(1),
  name: z.string(),
  status: state,
  impact: state,
  shortlink: optionalUrl,
  created_at: timestamp,
  updated_at: timestamp,
  started_at: optionalTimestamp,
  monitoring_at: optionalTimestamp,
  resolved_at: optionalTimestamp,
  incident_updates: list,
  components: list,
  reminder_intervals: reminderIntervals,
});

export const WireMaintenance = WireIncident.extend({
  scheduled_for: timestamp,
  scheduled_until: timestamp,
});

export const WireSummary = z.object({
  page: WirePage,
  status: z.object({ indicator: state, description: optionalText }),
  components: list,
  incidents: list,
  scheduled_maintenances: list,
});

export const WireUpcoming = z.object({
  page: WirePage,
  scheduled_maintenances: list,
});

/** `incidents.json`: the 50 most recent incidents, resolved ones included. */
export const WireIncidentHistory = z.object({
  page: WirePage,
  incidents: list,
});

/** `scheduled-maintenances.json`: the 50 most recent maintenances, completed ones included. */
export const WireMaintenanceHistory = WireUpcoming;

export type WirePage = z.output<typeof WirePage>;
export type WireComponent = z.output<typeof WireComponent>;
export type WireAffectedComponent = z.output<typeof WireAffectedComponent>;
export type WireIncidentUpdate = z.output<typeof WireIncidentUpdate>;
export type WireIncident = z.output<typeof WireIncident>;
export type WireSummary = z.output<typeof WireSummary>;
export type WireUpcoming = z.output<typeof WireUpcoming>;
export type WireIncidentHistory = z.output<typeof WireIncidentHistory>;
