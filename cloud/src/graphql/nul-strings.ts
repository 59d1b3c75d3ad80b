import { GraphQLError, type ValidationRule } from 'graphql';

/** A string literal holding U+0000 (`"\u0000"`) is refused before it runs: Postgres text cannot store the character. */
export const noNulInStringsRule: ValidationRule = (context) => ({
  StringValue(node) {
    if (node.value.includes('\u0000')) {
      context.reportError(new GraphQLError('a string must not contain the NUL character (U+0000)', { nodes: node, extensions: { code: 'BAD_USER_INPUT' } }));
    }
  },
});
