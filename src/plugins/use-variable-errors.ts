import { type GraphQLError, getOperationAST, getVariableValues } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { codedError } from '../errors/coded-error.js';
import { refusingBeforeRun } from './refusing-before-run.js';

/**
 * Gives the variables an operation was refused for their code, `BAD_USER_INPUT` with
 * `extensions.variable`: graphql-js reports a missing required variable, or one of the wrong
 * type, with a message alone, and a client that switches on `extensions.code` found none. The
 * variables are coerced here as the executor coerces them, before it runs; what is refused never
 * reaches a resolver or a limit that reads the variables.
 */
export function useVariableErrors(): Plugin {
  return refusingBeforeRun(({ schema, document, operationName, variableValues }) => {
    const definitions = getOperationAST(document, operationName)?.variableDefinitions;
    if (!definitions || definitions.length === 0) return undefined;
    const { errors } = getVariableValues(schema, definitions, variableValues ?? {});
    return errors && { errors: errors.map(withCode) };
  });
}

/** The variable graphql-js names first in `error`'s message (`Variable "$name" …`). */
const VARIABLE = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)"/;

function withCode(error: GraphQLError): GraphQLError {
  const variable = VARIABLE.exec(error.message)?.[1];
  return codedError('BAD_USER_INPUT', error.message, {
    nodes: error.nodes,
    originalError: error.originalError,
    // As graphql-js's own refusal was answered: 400, the request's fault before anything ran.
    extensions: { http: { status: 400 }, ...(variable === undefined ? {} : { variable }) },
  });
}
