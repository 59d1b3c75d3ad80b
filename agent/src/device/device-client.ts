import axios, { type AxiosInstance } from 'axios';
import { parseRetryAfter } from '../uplink/retry-policy.ts';

export const DEVICE_PATHS = {
  status: '/api/entrance-live/device/status',
  poll: '/api/entrance-live/device/poll',
  event: '/api/entrance-live/device/event',
  ack: '/api/entrance-live/device/command-ack',
} as const;
export type DevicePath = (typeof DEVICE_PATHS)[keyof typeof DEVICE_PATHS];

export interface DeviceResponse {
  status: number;
  data: unknown;
  retryAfterMs?: number;
}

/** No HTTP answer at all (connection refused, DNS, time-out). */
export class NetworkError extends Error {}

/** The device side of the live gateway's REST API: bearer-authenticated JSON POSTs. */
export class DeviceClient {
  private http: AxiosInstance | undefined;

  constructor(
    private cloudUrl: string,
    private token: string,
    private readonly requestTimeoutMs = 15_000,
  ) {}

  updateCredentials(cloudUrl: string, token: string): void {
    this.cloudUrl = cloudUrl;
    this.token = token;
  }

  /** `timeoutMs` extends the usual limit for long-polls the server may hold open. */
  async post(path: DevicePath, body: unknown, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<DeviceResponse> {
    this.http ??= axios.create({ validateStatus: () => true, maxRedirects: 0 });
    try {
      const response = await this.http.post(new URL(path, this.cloudUrl).toString(), body, {
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
        timeout: options.timeoutMs ?? this.requestTimeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const retryAfterMs = parseRetryAfter(response.headers['retry-after'] as string | undefined, Date.now());
      return { status: response.status, data: response.data, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    } catch (error) {
      throw new NetworkError(`${path}: ${(error as Error).message}`);
    }
  }
}

/** The `{"error": "…"}` text of an answer, for logs. */
export function answerText(data: unknown): string {
  if (data && typeof data === 'object' && 'error' in data && typeof data.error === 'string') return data.error;
  return '';
}
