import type { AffectedComponent, IncidentUpdate, StatusEvent } from '../core/status/model.js';
import { builder } from './builder.js';
import { ComponentRef, ComponentStatusEnum } from './component.js';
import { PageRef } from './page-ref.js';

const ImpactEnum = builder.enumType('Impact', {
  description: 'How much an incident or maintenance affects users, least first.',
  values: {
    NONE: { description: 'No noticeable effect.' },
    MINOR: { description: 'Some users or requests are affected.' },
    MAJOR: { description: 'Many users are affected, or a service is down.' },
    CRITICAL: { description: 'The network or a core service is down for everyone.' },
    MAINTENANCE: { description: 'Planned maintenance.' },
    UNKNOWN: { description: 'The feed sent an impact this gateway does not know yet.' },
  } as const,
});

const IncidentUpdateStatusEnum = builder.enumType('IncidentUpdateStatus', {
  description:
    'The status an incident or a maintenance had when an update was posted: incident values first, then maintenance values.',
  values: {
    INVESTIGATING: { description: 'Incident: the cause is being looked for.' },
    IDENTIFIED: { description: 'Incident: the cause is known and a fix is under way.' },
    MONITORING: { description: 'Incident: a fix is in place and being watched.' },
    RESOLVED: { description: 'Incident: over.' },
    POSTMORTEM: { description: 'Incident: over, and a write-up of what happened was posted.' },
    SCHEDULED: { description: 'Maintenance: planned, not started.' },
    IN_PROGRESS: { description: 'Maintenance: under way.' },
    VERIFYING: { description: 'Maintenance: done, results being checked.' },
    COMPLETED: { description: 'Maintenance: over.' },
    UNKNOWN: { description: 'The feed sent a status this gateway does not know yet.' },
  } as const,
});

const AffectedComponentRef = builder.objectRef<AffectedComponent>('AffectedComponent').implement({
  readsStatusSnapshots: true,
  description: 'A component whose status an update changed, with its status before and after.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "The component's id; `component(id:)` looks it up." }),
    name: t.exposeString('name', {
      nullable: true,
      description: "The component's name at the time of the update.",
    }),
    oldStatus: t.expose('oldStatus', {
      type: ComponentStatusEnum,
      description: 'Status before the update.',
    }),
    newStatus: t.expose('newStatus', {
      type: ComponentStatusEnum,
      description: 'Status the update set.',
    }),
  }),
});

const IncidentUpdateRef = builder.objectRef<IncidentUpdate>('IncidentUpdate').implement({
  readsStatusSnapshots: true,
  description: 'A message posted on an incident or maintenance, e.g. "A fix has been deployed".',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Identifier of the update.' }),
    status: t.expose('status', {
      type: IncidentUpdateStatusEnum,
      description: 'The status the incident or maintenance moved to with this update.',
    }),
    body: t.exposeString('body', {
      description:
        'The message exactly as the operators wrote it: text with line breaks, and on some pages HTML such as `<br>` or Markdown links. Render it as the page does, or escape it.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was written.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it was last edited.' }),
    displayAt: t.expose('displayAt', {
      type: 'DateTime',
      description: 'The time to show next to the update; lists are sorted by it, newest first.',
    }),
    affectedComponents: t.expose('affectedComponents', {
      type: [AffectedComponentRef],
      description: 'Components whose status this update changed. Often empty.',
    }),
    deliverNotifications: t.exposeBoolean('deliverNotifications', {
      nullable: true,
      description:
        'Whether the page notified its subscribers of this update; null when the feed does not say.',
    }),
    tweetId: t.exposeString('tweetId', {
      nullable: true,
      description: 'The id of the tweet the page posted for this update, if any.',
    }),
    customTweet: t.exposeString('customTweet', {
      nullable: true,
      description: 'The text of that tweet when it differs from `body`, if any.',
    }),
  }),
});

/** The fields incidents and maintenances share, defined once. */
export const StatusEventRef = builder.interfaceRef<StatusEvent>('StatusEvent').implement({
  readsStatusSnapshots: true,
  description:
    'Something that happens to components of the network: an `Incident` (unplanned) or a `Maintenance` (planned).',
  resolveType: (event) => ('scheduledFor' in event ? 'Maintenance' : 'Incident'),
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Identifier, stable for the life of the event.' }),
    name: t.exposeString('name', { description: 'Title, e.g. "Elevated latency on Mirror Node".' }),
    page: t.field({
      readsStatusSnapshots: true,
      type: PageRef,
      description: 'The status page that lists it.',
      resolve: (event) => ({ slug: event.pageSlug }),
    }),
    impact: t.expose('impact', { type: ImpactEnum, description: 'How much users are affected.' }),
    shortlink: t.expose('shortlink', {
      type: 'URL',
      nullable: true,
      description: 'Short link to the event on the status page, to share or open for details.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was posted.' }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      description: 'When it last changed, e.g. a new update.',
    }),
    startedAt: t.expose('startedAt', {
      type: 'DateTime',
      nullable: true,
      description:
        'When it began, which can be earlier than `createdAt`. Null when the feed does not say.',
    }),
    monitoringAt: t.expose('monitoringAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When a fix went in and monitoring started; null until then.',
    }),
    resolvedAt: t.expose('resolvedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was over; null while it is not.',
    }),
    reminderIntervals: t.exposeIntList('reminderIntervals', {
      nullable: true,
      description:
        'Hours before the start when subscribers are reminded of it, as the page set them; null when the feed does not say.',
    }),
    updates: t.expose('updates', {
      type: [IncidentUpdateRef],
      description: 'The messages posted on it, newest first.',
    }),
    components: t.field({
      readsStatusSnapshots: true,
      type: [ComponentRef],
      description:
        "The components it affects. They are the same components as in the page's tree, so `group` and `children` work from here.",
      resolve: async (event, _args, { statusPages }) => {
        const tree = (await statusPages.of(event.pageSlug).summary()).value.componentsById;
        return event.components.map((listed) => tree.get(listed.id) ?? listed);
      },
    }),
  }),
});
