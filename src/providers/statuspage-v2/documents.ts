import { type FeedProvider, feedDocument } from '../../core/status/feed-document.js';
import {
  buildIncidentHistory,
  buildMaintenanceHistory,
  buildSummary,
  buildUpcoming,
} from './build.js';
import {
  incidentHistoryChanges,
  maintenanceHistoryChanges,
  summaryChanges,
  upcomingChanges,
} from './status-diff.js';
import { WireIncidentHistory, WireMaintenanceHistory, WireSummary, WireUpcoming } from './wire.js';

/**
 * A Statuspage v2 feed (`<page>/api/v2/…`): its documents, in the order they are polled. Only the
 * summary is required: some Statuspage-compatible hosts serve it alone.
 */
export const STATUSPAGE_V2: FeedProvider = {
  baseUrlPath: '/api/v2',
  documents: {
    summary: feedDocument({
      path: '/summary.json',
      schema: WireSummary,
      build: buildSummary,
      changes: summaryChanges,
    }),
    upcoming: feedDocument({
      path: '/scheduled-maintenances/upcoming.json',
      schema: WireUpcoming,
      build: buildUpcoming,
      changes: upcomingChanges,
      optional: true,
    }),
    incidentHistory: feedDocument({
      path: '/incidents.json',
      schema: WireIncidentHistory,
      build: buildIncidentHistory,
      changes: incidentHistoryChanges,
      optional: true,
    }),
    maintenanceHistory: feedDocument({
      path: '/scheduled-maintenances.json',
      schema: WireMaintenanceHistory,
      build: buildMaintenanceHistory,
      changes: maintenanceHistoryChanges,
      optional: true,
    }),
  },
};
