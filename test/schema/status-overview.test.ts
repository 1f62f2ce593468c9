import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

const NOW = new Date('2026-11-20T12:00:00Z');

interface Overview {
  statusOverview: {
    indicator: string;
    pages: { slug: string }[];
    degradedComponents: { name: string; status: string; page: { slug: string } }[];
    unresolvedIncidents: { id: string; page: { slug: string } }[];
    activeMaintenances: { id: string; status: string; page: { slug: string } }[];
  };
}

const SEVERITY = ['MAJOR_OUTAGE', 'PARTIAL_OUTAGE', 'DEGRADED_PERFORMANCE', 'UNDER_MAINTENANCE'];

describe('Query.statusOverview', () => {
  let harness: Harness;

  beforeAll(async () => {
    const alpha = createSimulatedFeed({ now: NOW });
    const beta = createSimulatedFeed({ now: NOW, groups: 2, componentsPerGroup: 3 });
    // One outage on beta, so that the worst of the two is beta's and listed first.
    const leaf = beta.summary.components.find((component) => !component.group);
    if (!leaf) throw new Error('beta has no plain component');
    leaf.status = 'major_outage';
    beta.summary.status = { indicator: 'major', description: 'Major System Outage' };
    harness = await startHarness({
      simulator: { statusPages: { alpha, beta } },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile(
          ['alpha', 'beta', 'gone'].map((slug) => ({
            slug,
            baseUrl: simulator.statusPageUrl(slug),
          })),
        ),
      }),
    });
  });
  afterAll(() => harness.close());

  it('gives the worst indicator and what is not operational across pages, worst first', async () => {
    const { status, body } = await harness.execute<Overview>(`{
      statusOverview {
        indicator
        pages { slug }
        degradedComponents { name status page { slug } }
        unresolvedIncidents { id page { slug } }
        activeMaintenances { id status page { slug } }
      }
    }`);
    expect(status).toBe(200);
    const overview = body.data?.statusOverview;
    if (!overview) throw new Error(JSON.stringify(body));
    expect(overview.indicator).toBe('MAJOR');
    expect(overview.pages.map((page) => page.slug)).toEqual(['alpha', 'beta']);
    const degraded = overview.degradedComponents;
    expect(degraded[0]).toMatchObject({ status: 'MAJOR_OUTAGE', page: { slug: 'beta' } });
    expect(new Set(degraded.map((component) => component.page.slug))).toEqual(
      new Set(['alpha', 'beta']),
    );
    const ranks = degraded.map((component) => SEVERITY.indexOf(component.status));
    expect(ranks.every((rank) => rank >= 0)).toBe(true);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(overview.unresolvedIncidents.length).toBeGreaterThan(0);
    for (const maintenance of overview.activeMaintenances) {
      expect(['IN_PROGRESS', 'VERIFYING']).toContain(maintenance.status);
    }
    // The page that 404s is left out, and said so.
    expect(body.errors).toEqual([
      expect.objectContaining({
        path: ['statusOverview'],
        extensions: expect.objectContaining({ slug: 'gone' }),
      }),
    ]);
  });

  it('reads only the pages named', async () => {
    harness.simulator.resetRequests();
    const { body } = await harness.execute<Overview>(
      '{ statusOverview(slugs: ["alpha"]) { indicator pages { slug } } }',
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.statusOverview.pages).toEqual([{ slug: 'alpha' }]);
    expect(harness.simulator.requests.map((request) => request.path)).toEqual([]);
  });
});
