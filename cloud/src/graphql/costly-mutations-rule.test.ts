import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { costlyMutationsRule } from './costly-mutations-rule.ts';

const schema = buildSchema(`
  type Query { ok: Boolean }
  type Mutation {
    signUp: Boolean signIn: Boolean startEntranceLiveStream(boxId: ID!): Boolean uploadGateVideo: Boolean
    createApiToken: Boolean stopEntranceLiveStream: Boolean
  }
`);
const problems = (query: string) => validate(schema, parse(query), [costlyMutationsRule]).map((error) => error.message);
const starts = (n: number) => Array.from({ length: n }, (_, i) => `s${i}: startEntranceLiveStream(boxId: "flood${i}")`).join(' ');

describe('costlyMutationsRule', () => {
  // 100 aliased startEntranceLiveStream in one request made 100 sessions and 100 START_STREAM commands.
  it('refuses more live starts than the cap, aliases and fragments counted', () => {
    expect(problems(`mutation { ${starts(4)} }`)).toEqual([]);
    expect(problems(`mutation { ${starts(100)} }`)).toEqual([
      'an operation may start a live stream at most 4 times; this one does so 100 times (aliases counted): send the rest in further requests',
    ]);
    expect(problems(`mutation { ...A ... on Mutation { ${starts(3)} } } fragment A on Mutation { x: startEntranceLiveStream(boxId: "a") y: startEntranceLiveStream(boxId: "b") }`)).toHaveLength(1);
  });

  it('allows one upload and one sign-up or sign-in, and five token creations', () => {
    expect(problems('mutation { a: uploadGateVideo b: uploadGateVideo }')).toEqual([
      'an operation may upload a video only once; this one does so 2 times (aliases counted): send each in a request of its own',
    ]);
    expect(problems('mutation { signUp signIn }')).toEqual([
      'an operation may sign up, sign in or change the password only once; this one does so 2 times (aliases counted): send each in a request of its own',
    ]);
    const tokens = (n: number) => Array.from({ length: n }, (_, i) => `t${i}: createApiToken`).join(' ');
    expect(problems(`mutation { ${tokens(5)} }`)).toEqual([]);
    expect(problems(`mutation { ${tokens(6)} }`)).toHaveLength(1);
  });

  it('leaves other mutations and queries alone', () => {
    expect(problems('mutation { a: stopEntranceLiveStream b: stopEntranceLiveStream c: stopEntranceLiveStream d: stopEntranceLiveStream e: stopEntranceLiveStream }')).toEqual([]);
    expect(problems('{ a: ok b: ok }')).toEqual([]);
  });
});
