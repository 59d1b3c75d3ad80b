import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { queryLimitsRule } from './query-limits.ts';

const schema = buildSchema(`
  type Query { hives: [Hive!]! }
  type Hive { id: ID! boxes: [Box!]! }
  type Box { id: ID! hive: Hive! }
`);
const rule = queryLimitsRule({ maxFields: 10, maxDepth: 4 });
const problems = (query: string) => validate(schema, parse(query), [rule]).map((error) => error.message);

describe('query limits', () => {
  it('serves an operation within both limits', () => {
    expect(problems('{ hives { id boxes { id } } }')).toEqual([]);
    expect(problems('{ a: hives { id } b: hives { id } c: hives { id } d: hives { id } e: hives { id } }')).toEqual([]);
  });

  it('counts every alias', () => {
    const aliases = Array.from({ length: 6 }, (_, i) => `a${i}: hives { id }`).join(' ');
    expect(problems(`query Many { ${aliases} }`)).toEqual(['operation "Many" selects more than 10 fields (aliases and fragments counted where they are used): split it into several requests']);
  });

  it('counts a fragment each time it is spread', () => {
    const query = 'fragment F on Hive { id boxes { id } } { a: hives { ...F } b: hives { ...F } c: hives { ...F } d: hives { ...on Hive { ...F } } }';
    expect(problems(query)).toHaveLength(1);
    expect(problems('fragment F on Hive { id boxes { id } } { a: hives { ...F } b: hives { ...F } }')).toEqual([]);
  });

  it('refuses deep nesting', () => {
    expect(problems('{ hives { boxes { hive { boxes { id } } } } }')).toEqual(['this operation nests fields 5 deep; at most 4 are served']);
    expect(problems('{ hives { boxes { hive { id } } } }')).toEqual([]);
  });

  it('leaves cyclic fragments to the specification rules without looping', () => {
    expect(problems('fragment A on Hive { boxes { hive { ...A } } } { hives { ...A } }')).toEqual([]);
  });
});
