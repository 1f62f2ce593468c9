import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { QueryLimits } from '../config.js';

/**
 * Bounds what one operation may ask for, with GraphQL Armor's validation rules: a static check
 * that rejects an abusive operation before any resolver runs, at a cost proportional to the
 * document. Batching is off (Yoga's default), so one request is one operation. Rejections are
 * GraphQL errors with `extensions.code: BAD_USER_INPUT` and a message naming the limit.
 */
export function useQueryLimits(limits: QueryLimits): Plugin[] {
  const { maxDepth, maxAliases, maxCost, maxTokens, maxDirectives, introspection } = limits;
  const plugins: Plugin[] = [
    maxTokensPlugin({ n: maxTokens }) as Plugin,
    maxDepthPlugin({ n: maxDepth, flattenFragments: true, ignoreIntrospection: true }) as Plugin,
    maxAliasesPlugin({ n: maxAliases }) as Plugin,
    maxDirectivesPlugin({ n: maxDirectives }) as Plugin,
    costLimitPlugin({ maxCost, ignoreIntrospection: true }) as Plugin,
  ];
  if (!introspection) {
    plugins.push(blockFieldSuggestionsPlugin() as Plugin, {
      onValidate({ addValidationRule }) {
        addValidationRule(NoSchemaIntrospectionCustomRule);
      },
    });
  }
  return plugins;
}
