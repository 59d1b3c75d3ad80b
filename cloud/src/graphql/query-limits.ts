import { GraphQLError, Kind, type FragmentDefinitionNode, type SelectionSetNode, type ValidationRule } from 'graphql';

export interface QueryLimits {
  /** Field selections in one operation, counted with every alias and every fragment spread where it is used. */
  maxFields: number;
  /** Fields nested in fields. */
  maxDepth: number;
}

/** Far above what the web app and the device clients ask in one request (a few dozen fields at most). */
export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxFields: 400, maxDepth: 10 };

interface Measure {
  fields: number;
  depth: number;
}

/**
 * Refuses an operation that would select more fields, or nest them deeper, than the limits. Each field may cost a
 * database query, so one request with hundreds of aliases could otherwise keep the server busy for minutes (and on
 * the embedded database, which runs in the server's own thread, hold up every other request meanwhile).
 */
export function queryLimitsRule(limits: QueryLimits = DEFAULT_QUERY_LIMITS): ValidationRule {
  return (context) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    // Stops counting once over the limit, so that fragments spread into each other many times cost no time here.
    const measure = (set: SelectionSetNode, depth: number, spreading: ReadonlySet<string>, total: Measure): void => {
      for (const selection of set.selections) {
        if (total.fields > limits.maxFields) return;
        if (selection.kind === Kind.FIELD) {
          total.fields += 1;
          total.depth = Math.max(total.depth, depth);
          if (selection.selectionSet) measure(selection.selectionSet, depth + 1, spreading, total);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          measure(selection.selectionSet, depth, spreading, total);
        } else {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          // An unknown or cyclic fragment is reported by the specification's own rules.
          if (fragment && !spreading.has(name)) measure(fragment.selectionSet, depth, new Set(spreading).add(name), total);
        }
      }
    };
    return {
      OperationDefinition(operation) {
        const total: Measure = { fields: 0, depth: 0 };
        measure(operation.selectionSet, 1, new Set(), total);
        const name = operation.name ? `operation "${operation.name.value}"` : 'this operation';
        if (total.fields > limits.maxFields) {
          context.reportError(
            new GraphQLError(`${name} selects more than ${limits.maxFields} fields (aliases and fragments counted where they are used): split it into several requests`, {
              nodes: operation,
              extensions: { code: 'QUERY_TOO_LARGE' },
            }),
          );
        } else if (total.depth > limits.maxDepth) {
          context.reportError(
            new GraphQLError(`${name} nests fields ${total.depth} deep; at most ${limits.maxDepth} are served`, { nodes: operation, extensions: { code: 'QUERY_TOO_LARGE' } }),
          );
        }
      },
    };
  };
}
