import { describe, expect, it } from 'vitest';
import { defineOperation, errorFromResponse } from './graphql.ts';

describe('operations', () => {
  it('take name and kind from the document', () => {
    const op = defineOperation<{ me: null }>(`
      query Me { me { id } }`);
    expect(op).toMatchObject({ name: 'Me', kind: 'query', document: 'query Me { me { id } }' });
    expect(defineOperation('subscription Changed($id: ID!) { changed(id: $id) }').kind).toBe('subscription');
  });

  it('refuse anonymous documents', () => {
    expect(() => defineOperation('{ me { id } }')).toThrow(/named operation/);
  });
});

describe('server errors', () => {
  it('become an ApiError with the code and messages', () => {
    const error = errorFromResponse([
      { message: 'too many failed sign-ins; try again in 15 minutes', extensions: { code: 'TOO_MANY_ATTEMPTS' } },
      { message: 'too many failed sign-ins; try again in 15 minutes' },
    ]);
    expect(error.code).toBe('TOO_MANY_ATTEMPTS');
    expect(error.message).toBe('too many failed sign-ins; try again in 15 minutes');
    expect(errorFromResponse([])).toMatchObject({ code: undefined, message: 'the server reported an error' });
  });
});
