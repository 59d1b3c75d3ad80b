/**
 * File uploads by the GraphQL multipart request convention: a form with `operations` (the request, files as null),
 * `map` (which form field fills which variable) and the files. XHR rather than fetch, because only XHR reports
 * upload progress.
 */
import { ApiError, errorFromResponse, GRAPHQL_PATH, notifyIfUnauthenticated, type GraphQLErrorItem, type Operation } from './graphql.ts';

/**
 * The server takes a multipart request authenticated by the session cookie only with this header: a form or a
 * no-cors request from another origin cannot send it, so it proves the upload comes from this app (CSRF defence;
 * see cloud/src/video/upload-plugin.ts). The value does not matter.
 */
export const CSRF_PROOF_HEADER = 'x-requested-with';

export interface UploadProgress {
  loaded: number;
  total: number;
  /** 0–100, or undefined while the browser does not know the total. */
  percent: number | undefined;
}

/** The form fields of a multipart GraphQL request, in the order the convention requires (operations, map, files). */
export function multipartFields<TVariables>(
  operation: Operation<unknown, TVariables>,
  variables: TVariables,
  files: Record<string, Blob>,
): [string, string | Blob][] {
  const entries = Object.entries(files);
  for (const [path] of entries) {
    if (!path.startsWith('variables.')) throw new Error(`a file must fill a variable ("variables.<name>"), not "${path}"`);
  }
  const map = Object.fromEntries(entries.map(([path], index) => [String(index), [path]]));
  const fields: [string, string | Blob][] = [
    ['operations', JSON.stringify({ query: operation.document, operationName: operation.name, variables })],
    ['map', JSON.stringify(map)],
  ];
  entries.forEach(([, file], index) => fields.push([String(index), file]));
  return fields;
}

export function uploadWithProgress<TData, TVariables>(
  operation: Operation<TData, TVariables>,
  variables: TVariables,
  files: Record<string, Blob>,
  onProgress: (progress: UploadProgress) => void,
  signal?: AbortSignal,
): Promise<TData> {
  const form = new FormData();
  for (const [name, value] of multipartFields(operation, variables, files)) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, value instanceof File ? value.name : name);
  }
  return new Promise<TData>((resolve, reject) => {
    if (signal?.aborted) return reject(new DOMException('upload cancelled', 'AbortError'));
    const xhr = new XMLHttpRequest();
    xhr.open('POST', GRAPHQL_PATH);
    xhr.withCredentials = true;
    xhr.responseType = 'text';
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader(CSRF_PROOF_HEADER, 'XMLHttpRequest');
    xhr.upload.addEventListener('progress', (event) => {
      onProgress({ loaded: event.loaded, total: event.total, percent: event.lengthComputable && event.total > 0 ? Math.floor((event.loaded / event.total) * 100) : undefined });
    });
    xhr.addEventListener('load', () => {
      let body: { data?: TData | null; errors?: GraphQLErrorItem[]; error?: string } | undefined;
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        body = undefined;
      }
      if (body?.errors && body.errors.length > 0) {
        const error = errorFromResponse(body.errors);
        notifyIfUnauthenticated(error);
        return reject(error);
      }
      if (xhr.status === 413) return reject(new ApiError('The file is larger than this server accepts.', 'TOO_LARGE'));
      if (xhr.status < 200 || xhr.status >= 300 || !body?.data) {
        return reject(new ApiError(body?.error ?? `The upload failed: the server answered ${xhr.status}.`, xhr.status === 401 ? 'UNAUTHENTICATED' : undefined));
      }
      resolve(body.data);
    });
    xhr.addEventListener('error', () => reject(new ApiError('The upload was interrupted: the connection to the server failed.', 'NETWORK')));
    xhr.addEventListener('abort', () => reject(new DOMException('upload cancelled', 'AbortError')));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}
