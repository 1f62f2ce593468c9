import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { QueryLimits } from '../config.js';
import { codedError } from '../errors/coded-error.js';

/**
 * Bounds what one operation may ask for, with GraphQL Armor's validation rules: a static check
 * that rejects an abusive operation before any resolver runs, at a cost proportional to the
 * document. Batching is off (Yoga's default), so one request is one operation. Rejections are
 * GraphQL errors with `extensions.code: BAD_USER_INPUT` and a message naming the limit.
 */
export function useQueryLimits(limits: QueryLimits): Plugin[] {
  const { maxDepth, maxAliases, maxCost, maxTokens, maxDirectives, introspection } = limits;
  /** Reported as a validation error (not thrown), relabeled with its code and variable. */
  const rejection = (limit: string) => ({
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) =>
        context?.reportError(asLimitError(error, limit)),
    ],
  });
  const plugins: Plugin[] = [
    maxTokensPlugin({ n: maxTokens }) as Plugin,
    useTokenLimitCode(),
    maxDepthPlugin({
      n: maxDepth,
      flattenFragments: true,
      ignoreIntrospection: true,
      ...rejection('MAX_DEPTH'),
    }) as Plugin,
    // Every alias, `__typename`'s too (graphql-armor leaves them out by default): each is a key of
    // the answer to build and send, as MAX_ALIASES says.
    maxAliasesPlugin({ n: maxAliases, allowList: [], ...rejection('MAX_ALIASES') }) as Plugin,
    maxDirectivesPlugin({ n: maxDirectives, ...rejection('MAX_DIRECTIVES') }) as Plugin,
    costLimitPlugin({ maxCost, ignoreIntrospection: true, ...rejection('MAX_COST') }) as Plugin,
  ];
  if (!introspection) {
    plugins.push(blockFieldSuggestionsPlugin() as Plugin, useNoSuggestions(), {
      onValidate({ addValidationRule }) {
        addValidationRule(NoSchemaIntrospectionCustomRule);
      },
    });
  }
  return plugins;
}

/**
 * GraphQL Armor words a limit as "Syntax Error: …" with no code. It is what it is: the operation
 * is over a limit (`BAD_USER_INPUT`), and `limit` names the variable that sets it. The cost it
 * found is a sum of fractions ("found 2157195.4163699457"): read rounded up, as `roundedUp` says.
 */
function asLimitError(error: GraphQLError, limit: string): GraphQLError {
  const message = error.message
    .replace(/^Syntax Error: /, '')
    .replace(/\d+\.\d+/g, (number) => String(roundedUp(Number(number))));
  return codedError('BAD_USER_INPUT', message, {
    ...(error.nodes ? { nodes: error.nodes } : {}),
    extensions: { limit },
  });
}

/**
 * A cost as a reader compares it with its limit: whole from 100 up, one decimal below; rounded up,
 * so that what is over the limit never reads as the limit itself.
 */
const roundedUp = (cost: number) =>
  cost >= 100 ? Math.ceil(cost) : Math.ceil(cost * 10 - 1e-9) / 10;

/** The token limit stops the parser, so its error is relabeled where parsing ends. */
function useTokenLimitCode(): Plugin {
  return {
    onParse:
      () =>
      ({ result, replaceParseResult }) => {
        if (result instanceof GraphQLError && /^Syntax Error: Token limit /.test(result.message)) {
          replaceParseResult(asLimitError(result, 'MAX_TOKENS'));
        }
      },
  };
}

/**
 * With introspection off, no message names what the schema has: graphql-js suggests enum values
 * and input fields while coercing variables ("Did you mean the enum value …?"), after validation.
 */
function useNoSuggestions(): Plugin {
  const DID_YOU_MEAN = / ?Did you mean [^?]*\?/g;
  const strip = (error: GraphQLError) =>
    DID_YOU_MEAN.test(error.message)
      ? new GraphQLError(error.message.replace(DID_YOU_MEAN, ''), {
          ...(error.nodes ? { nodes: error.nodes } : {}),
          ...(error.path ? { path: error.path } : {}),
          extensions: error.extensions,
        })
      : error;
  return {
    onExecute: () => ({
      onExecuteDone({ result, setResult }) {
        if (Symbol.asyncIterator in result || !result.errors) return;
        setResult({ ...result, errors: result.errors.map(strip) });
      },
    }),
  };
}
