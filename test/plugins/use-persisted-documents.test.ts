import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, validate } from 'graphql';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  DEFAULT_MANIFEST,
  ManifestError,
  readManifest,
} from '../../src/persisted-documents/manifest.js';
import { schema } from '../../src/schema/index.js';
import type { Harness } from '../helpers/harness.js';
import { startInProcess } from '../helpers/in-process.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';

const manifest = JSON.parse(readFileSync(DEFAULT_MANIFEST, 'utf8')) as Record<string, string>;

/** The manifest id of the operation named `name`. */
function idOf(name: string): string {
  const found = Object.entries(manifest).find(([, text]) =>
    new RegExp(`(query|mutation) ${name}\\b`).test(text),
  );
  if (!found) throw new Error(`no ${name} in persisted-documents.json`);
  return found[0];
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Sends one request to a gateway: the harness's over loopback, or one in process. */
type Transport = (
  path: string,
  init: { method?: string; headers: Record<string, string>; body?: string },
) => Promise<{ status: number; headers: Headers; text: string }>;

interface Answer {
  status: number;
  headers: Headers;
  body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
}

/**
 * One gateway at the defaults; the test of PERSISTED_DOCUMENTS_ONLY, which refuses the
 * registration the automatic persisted queries test makes, asks what admission lets through, the
 * listener's alone: a gateway in process, with no upstream.
 */
describe('persisted documents', () => {
  const harnesses = sharedHarnesses();
  afterAll(() => harnesses.close());
  let harness: Harness | undefined;

  async function start() {
    harness = await harnesses.use();
  }

  async function send(
    params: Record<string, unknown>,
    method: 'GET' | 'POST' = 'POST',
    transport: Transport = async (path, init) => {
      if (!harness) throw new Error('start the harness first');
      const response = await harness.fetch(path, init);
      return { status: response.status, headers: response.headers, text: await response.text() };
    },
  ): Promise<Answer> {
    const headers = { accept: 'application/graphql-response+json, application/json;q=0.9' };
    const answer =
      method === 'GET'
        ? await transport(
            `/graphql?${new URLSearchParams(
              Object.entries(params).map(([name, value]) => [
                name,
                typeof value === 'string' ? value : JSON.stringify(value),
              ]),
            )}`,
            { headers },
          )
        : await transport('/graphql', {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify(params),
          });
    return { status: answer.status, headers: answer.headers, body: JSON.parse(answer.text) };
  }

  it('holds every operation of the API guide, each valid against the schema', () => {
    expect(Object.keys(manifest).length).toBeGreaterThanOrEqual(14);
    for (const name of [
      'PageTree',
      'StatusBanner',
      'StatusIndicator',
      'ComponentTree',
      'ComponentById',
      'VerifyContract',
      'SupportedChains',
    ]) {
      expect(idOf(name)).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
    for (const [id, text] of Object.entries(manifest)) {
      expect(id).toBe(`sha256:${sha256(text)}`);
      expect(validate(schema, parse(text))).toEqual([]);
    }
  });

  it('runs a document by documentId, over GET and POST, with variables', async () => {
    await start();
    for (const method of ['GET', 'POST'] as const) {
      const tree = await send({ documentId: idOf('PageTree') }, method);
      expect(tree.status).toBe(200);
      expect(tree.body.errors).toBeUndefined();
      expect(tree.body.data?.statusPage).toMatchObject({ name: expect.any(String) });

      const componentId = harness?.simulator.statusFeed.summary.components[0]?.id;
      const component = await send(
        { documentId: idOf('ComponentById'), variables: { id: componentId } },
        method,
      );
      expect(component.body).toMatchObject({ data: { component: { name: expect.any(String) } } });
    }
    const logged = (harness?.logs ?? []).filter((line) => line.msg === 'request');
    expect(logged.map((line) => line.operation)).toContain('PageTree');
  });

  it('answers an unknown id PERSISTED_QUERY_NOT_FOUND and a malformed one BAD_REQUEST', async () => {
    await start();
    const unknown = await send({ documentId: `sha256:${'0'.repeat(64)}` });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(unknown.headers.get('cache-control')).toBe('no-store');

    for (const documentId of ['PageTree', 'sha256:XYZ', `sha1:${'0'.repeat(40)}`, 42, '']) {
      for (const method of ['GET', 'POST'] as const) {
        const answer = await send({ documentId }, method);
        expect(answer.status).toBe(400);
        expect(answer.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
        expect(answer.body.errors?.[0]?.message).toMatch(/documentId/);
      }
    }
    const both = await send({ documentId: idOf('PageTree'), query: '{ __typename }' });
    expect(both.status).toBe(400);
    expect(both.body.errors?.[0]?.message).toMatch(/either "documentId" or "query"/);
  });

  it("accepts Apollo's automatic persisted queries: not found, register, then by hash", async () => {
    await start();
    const query = '{ statusPage { name status { description } } }';
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };

    const first = await send({ extensions: { persistedQuery } });
    expect(first.body.errors?.[0]).toMatchObject({
      message: 'PersistedQueryNotFound',
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
    });
    const registered = await send({ query, extensions: { persistedQuery } });
    expect(registered.body.errors).toBeUndefined();
    for (const method of ['GET', 'POST'] as const) {
      const byHash = await send({ extensions: { persistedQuery } }, method);
      expect(byHash.body).toEqual(registered.body);
    }

    // A manifest document is known by its hash without registering it.
    const banner = await send({
      extensions: {
        persistedQuery: { version: 1, sha256Hash: idOf('StatusBanner').slice('sha256:'.length) },
      },
    });
    expect(banner.body.data?.statusPage).toMatchObject({ status: expect.any(Object) });

    const mismatch = await send({
      query: '{ __typename }',
      extensions: { persistedQuery },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    const malformed = await send({
      extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } },
    });
    expect(malformed.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });

  it('with PERSISTED_DOCUMENTS_ONLY runs the manifest alone, by id, by hash or as its exact text', async () => {
    const only = startInProcess({ env: { PERSISTED_DOCUMENTS_ONLY: true } });
    onTestFinished(() => only.close());
    const sendOnly = (params: Record<string, unknown>, method?: 'GET' | 'POST') =>
      send(params, method, only.request);
    const refused = await sendOnly({ query: '{ statusPage { name } }' });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_DOCUMENT_REQUIRED');
    const byGet = await sendOnly({ query: '{ statusPage { name } }' }, 'GET');
    expect(byGet.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_DOCUMENT_REQUIRED');

    const query = '{ statusPage { name } }';
    const register = await sendOnly({
      query,
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } },
    });
    expect(register.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_DOCUMENT_REQUIRED');

    // A document of the manifest that asks no upstream: an id no job can have, which the
    // gateway's resolver refuses itself, as a result.
    const variables = { id: 'not-a-job-id' };
    const byId = await sendOnly({ documentId: idOf('VerificationJob'), variables }, 'GET');
    expect(byId.body.errors).toBeUndefined();
    expect(byId.body.data).toMatchObject({ verificationJob: { __typename: 'InvalidInputError' } });
    const text = manifest[idOf('VerificationJob')] as string;
    const asText = await sendOnly({ query: text, variables });
    expect(asText.body).toEqual(byId.body);
  });

  it('refuses to start with a manifest whose ids are not the hashes of their documents', () => {
    const folder = mkdtempSync(join(tmpdir(), 'manifest-'));
    const file = join(folder, 'persisted-documents.json');
    writeFileSync(
      file,
      JSON.stringify({
        [`sha256:${sha256('{ a }')}`]: '{ b }',
        'sha256:nope': '{ a }',
        [`sha256:${sha256('{ a ')}`]: '{ a ',
      }),
    );
    expect(() => readManifest(file)).toThrow(ManifestError);
    expect(() => readManifest(file)).toThrow(
      /not the hash of its document[\s\S]*not a sha256[\s\S]*does not parse/,
    );
    writeFileSync(file, '[1, 2]');
    expect(() => readManifest(file)).toThrow(/not a JSON object/);
  });
});
