/**
 * A status page as incident.io hosts it (status.openai.com, /work/shared/real-feeds/openai):
 * Statuspage-shaped, but with ULID ids, positions from 0, and the keys such feeds leave out: no
 * `time_zone`, no `scheduled_maintenances`, components without `description`, `showcase`,
 * `start_date`, `group`, `group_id` or `only_show_if_degraded`, incidents without `shortlink`,
 * `started_at`, `monitoring_at`, `resolved_at` or `components`. It serves the summary alone: the
 * maintenance documents and the incident history answer 404, as such hosts do.
 */

/** Crockford's base 32, the alphabet of ULIDs. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID-shaped id: its time part from `time`, the rest from `seed` (deterministic). */
function ulid(time: number, seed: number): string {
  let text = '';
  let rest = time;
  for (let i = 0; i < 10; i += 1) {
    text = CROCKFORD[rest % 32] + text;
    rest = Math.floor(rest / 32);
  }
  let state = seed * 2_654_435_761;
  for (let i = 0; i < 16; i += 1) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    text += CROCKFORD[state % 32];
  }
  return text;
}

const COMPONENTS = [
  ['API', 'degraded_performance'],
  ['Chat', 'operational'],
  ['Realtime', 'operational'],
  ['Files', 'operational'],
  ['Fine-tuning', 'operational'],
  ['Login', 'operational'],
] as const;

/** The summary document of an incident.io-hosted page, as of `now`. */
export function createIncidentIoSummary(now: Date = new Date()): unknown {
  const at = (minutesAgo: number) =>
    new Date(now.getTime() - minutesAgo * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const pageId = ulid(now.getTime() - 86_400_000 * 400, 1);
  const components = COMPONENTS.map(([name, status], position) => ({
    created_at: at(60 * 24 * (300 - position)),
    id: ulid(now.getTime() - 86_400_000 * (300 - position), 10 + position),
    name,
    page_id: pageId,
    position,
    status,
    updated_at: at(status === 'operational' ? 60 * 24 : 20),
  }));
  return {
    components,
    incidents: [
      {
        created_at: at(25),
        id: ulid(now.getTime() - 25 * 60_000, 100),
        impact: 'none',
        incident_updates: [
          {
            body: 'We are seeing elevated error rates on the API. Updates on [our status page](https://status.example-ai.com).',
            created_at: at(25),
            display_at: at(25),
            id: ulid(now.getTime() - 25 * 60_000, 101),
            incident_id: ulid(now.getTime() - 25 * 60_000, 100),
            status: 'investigating',
            updated_at: at(25),
          },
        ],
        name: 'Elevated error rates on the API',
        page_id: pageId,
        status: 'investigating',
        updated_at: at(25),
      },
    ],
    page: {
      id: pageId,
      name: 'Example AI',
      updated_at: at(20),
      url: 'https://status.example-ai.com',
    },
    status: { description: 'Minor Service Outage', indicator: 'minor' },
  };
}
