import type { Maintenance } from '../core/status/model.js';
import { builder } from './builder.js';
import { pageEntity } from './page-entity.js';
import { StatusEventRef } from './status-event.js';

const MaintenanceStatusEnum = builder.enumType('MaintenanceStatus', {
  description: 'Where a maintenance stands, in the order it moves.',
  values: {
    SCHEDULED: { description: 'Planned, not started.' },
    IN_PROGRESS: { description: 'Under way.' },
    VERIFYING: { description: 'Done; the results are being checked.' },
    COMPLETED: { description: 'Over.' },
    UNKNOWN: { description: 'The feed sent a status this gateway does not know yet.' },
  } as const,
});

export const MaintenanceRef = builder.objectRef<Maintenance>('Maintenance').implement({
  readsStatusSnapshots: true,
  description:
    'Planned work on one or more components, with its window and the updates posted on it.',
  interfaces: [StatusEventRef],
  fields: (t) => ({
    status: t.expose('status', {
      type: MaintenanceStatusEnum,
      description: 'Where the maintenance stands.',
    }),
    scheduledFor: t.expose('scheduledFor', {
      type: 'DateTime',
      description: 'When the maintenance window starts.',
    }),
    scheduledUntil: t.expose('scheduledUntil', {
      type: 'DateTime',
      description: 'When the maintenance window is planned to end.',
    }),
  }),
});

pageEntity(
  MaintenanceRef,
  'maintenance',
  'One maintenance by id: in progress, scheduled, or only in the list of upcoming ones. Null when the feed does not list it.',
);
