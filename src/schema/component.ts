import type { Component } from '../core/status/model.js';
import { builder } from './builder.js';
import { IncidentRef } from './incident.js';
import { MaintenanceRef } from './maintenance.js';
import { pageEntity } from './page-entity.js';
import { PageRef } from './page-ref.js';

export const ComponentStatusEnum = builder.enumType('ComponentStatus', {
  description: 'How a component is doing right now, best first.',
  values: {
    OPERATIONAL: { description: 'Working normally.' },
    DEGRADED_PERFORMANCE: { description: 'Working, but slower or less reliable than usual.' },
    PARTIAL_OUTAGE: { description: 'Failing for some users or some requests.' },
    MAJOR_OUTAGE: { description: 'Not working.' },
    UNDER_MAINTENANCE: { description: 'Taken down or limited on purpose for maintenance.' },
    UNKNOWN: {
      description:
        'The feed sent a status this gateway does not know yet. Show it as neutral rather than failing.',
    },
  } as const,
});

export const ComponentRef = builder.objectRef<Component>('Component');

ComponentRef.implement({
  readsStatusSnapshots: true,
  description:
    'A part of the network that has a status of its own, e.g. "Mainnet › Mirror Node REST API". Groups (e.g. "Mainnet") are components too: they have `isGroup: true` and `children`.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Identifier of the component, stable across updates.' }),
    name: t.exposeString('name', { description: 'Display name, e.g. "JSON-RPC Relay".' }),
    page: t.field({
      readsStatusSnapshots: true,
      type: PageRef,
      description: 'The status page that lists it.',
      resolve: (component) => ({ slug: component.pageSlug }),
    }),
    version: t.exposeString('version', {
      nullable: true,
      description:
        'The software version its name carries, e.g. `v0.58.10` for "Mainnet (v0.58.10) | Network Uptime", by the page\'s configured `versionPattern`; null without one or when the name has none.',
    }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'A sentence on what the component is, when the page gives one.',
    }),
    status: t.expose('status', {
      type: ComponentStatusEnum,
      description:
        "Current status. For a group it is the status the page gives the group, which is usually its worst child's.",
    }),
    position: t.exposeInt('position', {
      description:
        'Where the page places it among its siblings; lists here are already sorted by it.',
    }),
    showcase: t.exposeBoolean('showcase', {
      description: "Whether the page shows the component's uptime history.",
    }),
    onlyShowIfDegraded: t.exposeBoolean('onlyShowIfDegraded', {
      description: 'Whether the page hides the component while it is operational.',
    }),
    startDate: t.expose('startDate', {
      type: 'LocalDate',
      nullable: true,
      description:
        'The day since when the component has been in service, as the page gives it (a calendar date, not an instant); null when it does not say.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When the component was added to the page.',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      description: 'When the component last changed, e.g. its status.',
    }),
    isGroup: t.exposeBoolean('isGroup', {
      description: 'Whether this is a group of other components, e.g. "Mainnet".',
    }),
    group: t.expose('group', {
      type: ComponentRef,
      nullable: true,
      description:
        'The group this component belongs to. Null for top-level components, and when the group is missing from the feed.',
    }),
    children: t.expose('children', {
      type: [ComponentRef],
      description: 'The components of this group, by position. Empty for a plain component.',
    }),
    incidents: t.expose('incidents', {
      type: [IncidentRef],
      description: 'Unresolved incidents that affect this component.',
    }),
    maintenances: t.expose('maintenances', {
      type: [MaintenanceRef],
      description:
        'In-progress and scheduled maintenances (from the page summary) that affect this component.',
    }),
    incidentHistory: t.field({
      readsStatusSnapshots: true,
      type: [IncidentRef],
      nullable: true,
      description:
        "Incidents of the page's recent history (its 50 most recent, resolved ones included) that affected this component, most recent first. Null, with an error, when the feed does not serve its history.",
      resolve: async (component, _args, { statusPages }) =>
        (await statusPages.of(component.pageSlug).incidentHistory()).value.eventsByComponentId.get(
          component.id,
        ) ?? [],
    }),
    maintenanceHistory: t.field({
      readsStatusSnapshots: true,
      type: [MaintenanceRef],
      nullable: true,
      description:
        "Maintenances of the page's recent history (its 50 most recent, completed ones included) that affect this component. Null, with an error, when the feed does not serve its history.",
      resolve: async (component, _args, { statusPages }) =>
        (
          await statusPages.of(component.pageSlug).maintenanceHistory()
        ).value.eventsByComponentId.get(component.id) ?? [],
    }),
  }),
});

pageEntity(
  ComponentRef,
  'component',
  'One component by id, or null when the page has no such component: of the default page, or of the page `slug` names.',
);
