import { describe, expect, it } from 'vitest';
import { defineOperation } from './graphql.ts';
import { multipartFields } from './upload.ts';

const Upload = defineOperation<{ uploadGateVideo: boolean }, { file: null; boxId: string }>('mutation UploadGateVideo($file: Upload!, $boxId: ID!) { uploadGateVideo(file: $file, boxId: $boxId) }');

describe('multipart GraphQL request', () => {
  it('puts operations, then map, then the files', () => {
    const file = new Blob(['video']);
    const fields = multipartFields(Upload, { file: null, boxId: '7' }, { 'variables.file': file });
    expect(fields.map(([name]) => name)).toEqual(['operations', 'map', '0']);
    expect(JSON.parse(fields[0]![1] as string)).toEqual({ query: Upload.document, operationName: 'UploadGateVideo', variables: { file: null, boxId: '7' } });
    expect(JSON.parse(fields[1]![1] as string)).toEqual({ 0: ['variables.file'] });
    expect(fields[2]![1]).toBe(file);
  });

  it('numbers several files in order', () => {
    const fields = multipartFields(Upload, { file: null, boxId: '7' }, { 'variables.file': new Blob(['a']), 'variables.detections': new Blob(['b']) });
    expect(JSON.parse(fields[1]![1] as string)).toEqual({ 0: ['variables.file'], 1: ['variables.detections'] });
  });

  it('refuses a file that fills no variable', () => {
    expect(() => multipartFields(Upload, { file: null, boxId: '7' }, { file: new Blob(['a']) })).toThrow(/variables\.<name>/);
  });
});
