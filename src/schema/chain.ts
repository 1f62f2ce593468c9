import { type GraphQLResolveInfo, responsePathAsArray } from 'graphql';
import { COMPONENT_STATUS_SEVERITY } from '../core/status/model.js';
import { codedError } from '../errors/coded-error.js';
import type { Chain } from '../upstreams/verification/model.js';
import { builder } from './builder.js';
import { ComponentRef, ComponentStatusEnum } from './component.js';
import { type GatewayContext, reportedBeside } from './context.js';
import { PageRef } from './page-ref.js';
import { chainPages } from './page-slugs.js';
import { configurationOnly, readsItsPages } from './plugins/page-budget.js';

const ChainRef = builder.objectRef<Chain>('Chain').implement({
  // Its fields answer from the verification service and the configuration, but those that read
  // its page's feed.
  readsPages: configurationOnly,
  description: 'A chain the verification service can verify contracts on.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Decimal chain id, e.g. `1`; pass it as `chainId`.' }),
    name: t.exposeString('name', { description: 'Name of the chain, e.g. "Ethereum Mainnet".' }),
    supportsExplorerVerification: t.exposeBoolean('explorerVerification', {
      description:
        "Whether `verifyContract` can fetch sources from the chain's block explorer. When false, the chain is supported but not through an explorer.",
    }),
    statusPage: t.field({
      type: PageRef,
      nullable: true,
      description:
        'The status page that stands for the chain, as the gateway configuration maps it (`STATUS_PAGES_FILE`); null when none does.',
      resolve: (chain, _args, { statusPages }) => statusPages.registry.chain(chain.id) ?? null,
    }),
    status: t.field({
      readsPages: readsItsPages,
      type: ComponentStatusEnum,
      nullable: true,
      description:
        'The worst status of the components that stand for the chain on its page; null when no page is mapped to it (an error beside it when the page cannot be read).',
      resolve: async (chain, _args, context, info) =>
        (await componentsOf(chain, context, info))
          ?.map(({ status }) => status)
          .sort((a, b) => COMPONENT_STATUS_SEVERITY[b] - COMPONENT_STATUS_SEVERITY[a])[0] ?? null,
    }),
    components: t.field({
      readsPages: readsItsPages,
      type: [ComponentRef],
      description:
        "The components that stand for the chain on its status page, in the configuration's order; empty when no page is mapped to it, or (with an error beside it) while the page cannot be read.",
      resolve: async (chain, _args, context, info) =>
        (await componentsOf(chain, context, info).catch(reportedBeside(context, info.path))) ?? [],
    }),
    softwareVersion: t.string({
      readsPages: readsItsPages,
      nullable: true,
      description:
        "The software version the chain's components carry in their names (the first that has one), by its page's `versionPattern`; null without one.",
      resolve: async (chain, _args, context, info) =>
        (await componentsOf(chain, context, info))?.find((component) => component.version !== null)
          ?.version ?? null,
    }),
  }),
});

/**
 * The components mapped to `chain` as its page lists them now; undefined when none is mapped.
 * Ids the page does not list are left out, and named in an error beside the field at `info`.
 */
async function componentsOf(chain: Chain, context: GatewayContext, info: GraphQLResolveInfo) {
  const { registry } = context.statusPages;
  const mapped = registry.chain(chain.id);
  if (!mapped) return undefined;
  const { componentsById } = (await context.statusPages.of(mapped.slug).summary()).value;
  const missing = mapped.components.filter((id) => !componentsById.has(id));
  if (missing.length > 0) {
    const j = registry.config(mapped.slug).chains.findIndex(({ chainId }) => chainId === chain.id);
    const configured = `STATUS_PAGES_FILE pages[${registry.position(mapped.slug)}].chains[${j}].components`;
    reportMismatch(
      context,
      info,
      `The status page ${mapped.slug} lists no component ${missing.join(', ')}, which ${configured} maps to chain ${chain.id}: the chain's fields leave ${them(missing)} out.`,
      missing,
      configured,
    );
  }
  return mapped.components.flatMap((id) => componentsById.get(id) ?? []);
}

builder.objectField(PageRef, 'chains', (t) =>
  t.field({
    readsPages: configurationOnly,
    type: [ChainRef],
    description:
      "The supported chains (`supportedChains`) the page stands for, as the gateway configuration maps them, in its order. Empty, with an error beside it, when the verification service's chain list cannot be read.",
    resolve: async (page, _args, context, info) => {
      const configured = context.statusPages.registry.config(page.slug).chains;
      if (configured.length === 0) return [];
      const chains = await context.verification
        .supportedChains(context.requestId)
        .catch(reportedBeside(context, info.path));
      if (!chains) return [];
      const byId = new Map(chains.map((chain) => [chain.id, chain]));
      const i = context.statusPages.registry.position(page.slug);
      const missing = configured.flatMap(({ chainId }, j) =>
        byId.has(chainId) ? [] : [{ chainId, where: `pages[${i}].chains[${j}].chainId` }],
      );
      if (missing.length > 0) {
        const ids = missing.map(({ chainId }) => chainId);
        const paths = missing.map(({ where }) => `STATUS_PAGES_FILE ${where}`);
        reportMismatch(
          context,
          info,
          `The verification service does not list as supported chain ${ids.join(', ')} (STATUS_PAGES_FILE ${missing.map(({ where }) => where).join(', ')}): the page's chains leave ${them(ids)} out.`,
          ids,
          paths,
        );
      }
      return configured.flatMap(({ chainId }) => byId.get(chainId) ?? []);
    },
  }),
);

builder.queryField('supportedChains', (t) =>
  t.field({
    readsPages: chainPages,
    type: [ChainRef],
    description:
      'The chains the verification service verifies contracts on. Empty, with an error beside it, when the service has no chain list; `verifyContract` then leaves the check to the service.',
    resolve: async (_root, _args, context, info) =>
      (await context.verification
        .supportedChains(context.requestId)
        .catch(reportedBeside(context, info.path))) ?? [],
  }),
);

/**
 * Reports beside the field at `info` what the configuration names and an upstream lacks
 * (`missing`), and where the file configures it: the field answers with what exists.
 */
function reportMismatch(
  context: GatewayContext,
  info: GraphQLResolveInfo,
  message: string,
  missing: readonly string[],
  configured: string | readonly string[],
): void {
  context.partialErrors.push(
    codedError('CONFIGURATION_MISMATCH', message, {
      path: responsePathAsArray(info.path),
      extensions: { missing, configured },
    }),
  );
}

const them = (ids: readonly string[]) => (ids.length === 1 ? 'it' : 'them');
