import { describe, expect, it } from 'vitest';
import { defineOperation, errorFromResponse, FeatureUnavailableError, missingFeature } from './graphql.ts';

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
  it('name the missing feature for validation errors about unknown fields and types', () => {
    expect(missingFeature([{ message: 'Cannot query field "gateVideos" on type "Query".' }])).toBe('Query.gateVideos');
    expect(missingFeature([{ message: 'Cannot query field "device" on type "Box". Did you mean "id"?' }])).toBe('Box.device');
    expect(missingFeature([{ message: 'Unknown type "Upload".' }])).toBe('Upload');
    expect(missingFeature([{ message: 'Unknown argument "limit" on field "Query.gateVideos".' }])).toBe('Query.gateVideos(limit)');
    expect(missingFeature([{ message: 'login or password is wrong' }])).toBeUndefined();
  });

  it('become FeatureUnavailableError or an ApiError with the code and messages', () => {
    expect(errorFromResponse([{ message: 'Cannot query field "x" on type "Query".' }])).toBeInstanceOf(FeatureUnavailableError);
    const error = errorFromResponse([
      { message: 'too many failed sign-ins; try again in 15 minutes', extensions: { code: 'TOO_MANY_ATTEMPTS' } },
      { message: 'too many failed sign-ins; try again in 15 minutes' },
    ]);
    expect(error.code).toBe('TOO_MANY_ATTEMPTS');
    expect(error.message).toBe('too many failed sign-ins; try again in 15 minutes');
  });
});
