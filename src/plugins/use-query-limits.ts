import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export interface QueryLimits {
  /**
   * Deepest selection nesting, fragments flattened. The page tree query needs 5.
   * @default 12
   */
  readonly maxDepth?: number;
  /**
   * Aliases in one operation.
   * @default 30
   */
  readonly maxAliases?: number;
  /**
   * Cost of an operation: 2 per object, 1 per scalar, times 1.5 per level of depth.
   * The page tree query costs about 400.
   * @default 5000
   */
  readonly maxCost?: number;
  /**
   * Tokens in the document, checked while parsing so a huge document is never fully parsed.
   * @default 2000
   */
  readonly maxTokens?: number;
  /**
   * Directives in one operation.
   * @default 20
   */
  readonly maxDirectives?: number;
  /**
   * Serve introspection. When off, "did you mean" suggestions are off too, so field names do not
   * leak through error messages.
   * @default true
   */
  readonly introspection?: boolean;
}

/**
 * Bounds what one operation may ask for, with GraphQL Armor's validation rules: a static check
 * that rejects an abusive operation before any resolver runs, at a cost proportional to the
 * document. Batching is off (Yoga's default), so one request is one operation. Rejections are
 * GraphQL errors with `extensions.code: BAD_USER_INPUT` and a message naming the limit.
 */
export function useQueryLimits(limits: QueryLimits = {}): Plugin[] {
  const {
    maxDepth = 12,
    maxAliases = 30,
    maxCost = 5_000,
    maxTokens = 2_000,
    maxDirectives = 20,
    introspection = true,
  } = limits;
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
