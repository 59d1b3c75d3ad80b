import { GraphQLError, Kind, type FieldNode, type FragmentDefinitionNode, type SelectionSetNode, type ValidationRule } from 'graphql';

/** Mutations that start costly work, counted together, and how many of them one operation may hold. */
export interface CostlyMutations {
  fields: readonly string[];
  max: number;
  /** What they do, as in "an operation may … only once". */
  work: string;
}

/**
 * The per-operation caps (the SDL descriptions of these mutations state them). Under aliases one request carried 40
 * sign-ups (about 32 MiB and tens of milliseconds of scrypt each, past any throttle that counts requests), and 100 live
 * starts (100 sessions and START_STREAM commands from a control-only token). A few live starts serve a page showing a
 * few boxes; an upload is one request per clip; tokens are made one by one from the profile page or a script.
 */
export const COSTLY_MUTATIONS: readonly CostlyMutations[] = [
  { fields: ['signUp', 'signIn', 'changePassword'], max: 1, work: 'sign up, sign in or change the password' },
  { fields: ['startEntranceLiveStream'], max: 4, work: 'start a live stream' },
  { fields: ['uploadGateVideo'], max: 1, work: 'upload a video' },
  { fields: ['createApiToken'], max: 5, work: 'create an API token' },
];

function refusal(group: CostlyMutations, count: number): string {
  const allowed = group.max === 1 ? 'only once' : `at most ${group.max} times`;
  const advice = group.max === 1 ? 'send each in a request of its own' : 'send the rest in further requests';
  return `an operation may ${group.work} ${allowed}; this one does so ${count} times (aliases counted): ${advice}`;
}

/**
 * Refuses an operation holding more of a group of COSTLY_MUTATIONS than its cap, before any of it runs. Only root
 * fields can be mutations; fragments spread at the root are followed (once each, so cycles end).
 */
export const costlyMutationsRule: ValidationRule = (context) => {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of context.getDocument().definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const collect = (set: SelectionSetNode, spread: Set<string>, found: FieldNode[]): void => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        found.push(selection);
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
      const rootFields: FieldNode[] = [];
      collect(operation.selectionSet, new Set(), rootFields);
      for (const group of COSTLY_MUTATIONS) {
        const found = rootFields.filter((field) => group.fields.includes(field.name.value));
        if (found.length <= group.max) continue;
        context.reportError(new GraphQLError(refusal(group, found.length), { nodes: found.slice(group.max), extensions: { code: 'BAD_USER_INPUT' } }));
      }
    },
  };
};
