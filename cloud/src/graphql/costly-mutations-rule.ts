import { GraphQLError, Kind, type FieldNode, type FragmentDefinitionNode, type SelectionSetNode, type ValidationRule } from 'graphql';

/** The mutations that hash a password (about 32 MiB and tens of milliseconds of scrypt each). */
export const PASSWORD_MUTATIONS: readonly string[] = ['signUp', 'signIn', 'changePassword'];

/**
 * Refuses an operation that signs up, signs in or changes the password more than once, before any of it runs. Under aliases one request
 * carried 40 sign-ups (the field limit would allow over a hundred): as many accounts and password hashes at once,
 * past any throttle that counts requests, and enough hashing to hold up the thread pool for everyone.
 */
export const oneAccountMutationRule: ValidationRule = (context) => {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of context.getDocument().definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  // Only root fields can be these mutations; fragments spread at the root are followed (once each, so cycles end).
  const collect = (set: SelectionSetNode, spread: Set<string>, found: FieldNode[]): void => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (PASSWORD_MUTATIONS.includes(selection.name.value)) found.push(selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet, spread, found);
      } else if (!spread.has(selection.name.value)) {
        spread.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet, spread, found);
      }
    }
  };
  return {
    OperationDefinition(operation) {
      if (operation.operation !== 'mutation') return;
      const found: FieldNode[] = [];
      collect(operation.selectionSet, new Set(), found);
      if (found.length < 2) return;
      context.reportError(
        new GraphQLError(`an operation may sign up, sign in or change the password only once; this one does so ${found.length} times (aliases counted): send each in a request of its own`, {
          nodes: found.slice(1),
          extensions: { code: 'BAD_USER_INPUT' },
        }),
      );
    },
  };
};
