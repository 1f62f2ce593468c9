import type { Incident } from '../core/status/model.js';
import { builder } from './builder.js';
import { pageEntity } from './page-entity.js';
import { StatusEventRef } from './status-event.js';

const IncidentStatusEnum = builder.enumType('IncidentStatus', {
  description: 'Where an incident stands, in the order it usually moves.',
  values: {
    INVESTIGATING: { description: 'The cause is being looked for.' },
    IDENTIFIED: { description: 'The cause is known and a fix is under way.' },
    MONITORING: { description: 'A fix is in place and being watched.' },
    RESOLVED: { description: 'Over.' },
    POSTMORTEM: { description: 'Over, and a write-up of what happened was posted.' },
    UNKNOWN: { description: 'The feed sent a status this gateway does not know yet.' },
  } as const,
});

export const IncidentRef = builder.objectRef<Incident>('Incident').implement({
  readsStatusSnapshots: true,
  description: 'An unplanned problem with one or more components, and the updates posted on it.',
  interfaces: [StatusEventRef],
  fields: (t) => ({
    status: t.expose('status', {
      type: IncidentStatusEnum,
      description: 'Where the incident stands.',
    }),
  }),
});

pageEntity(
  IncidentRef,
  'incident',
  "One incident by id: unresolved, from the page's summary, or resolved, from its incident history (its 50 most recent incidents). Null when neither lists it; an error instead when the history that might have listed it cannot be read.",
);
