import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { RefObject } from 'preact';
import { ApiError, isAbort, request, type Operation } from './api/graphql.ts';

export interface QueryState<TData> {
  data?: TData;
  error?: Error;
  loading: boolean;
  reload: () => void;
}

export interface QueryOptions<TData> {
  skip?: boolean;
  /**
   * What the data shows, where that is less than all of the variables (default: the variables). A failed request
   * keeps the data it would have replaced only when that is of the same key: a window that moves with the clock
   * ("the last 24 h", re-read each minute) passes its preset, so one failed re-read does not blank its charts.
   */
  dataKey?: string;
  /** Re-read this often (ms); a function picks the interval from the latest data (undefined: do not re-read). */
  pollMs?: number | ((data: TData) => number | undefined);
}

/** Retrying after a failed read waits at least this long, doubling after each failure in a row up to the most. */
const MIN_RETRY_MS = 5_000;
const MAX_RETRY_MS = 60_000;

/**
 * How long to wait before reading again after `failures` failed reads in a row. A page opened during a short outage
 * must come back by itself: it has no data to decide a poll interval from, and nobody may be there to press a button.
 */
export function retryDelayMs(failures: number): number {
  return Math.min(MAX_RETRY_MS, MIN_RETRY_MS * 2 ** Math.max(0, failures - 1));
}

function pollInterval<TData>(pollMs: QueryOptions<TData>['pollMs'], data: TData | undefined): number | undefined {
  if (typeof pollMs !== 'function') return pollMs;
  return data === undefined ? undefined : pollMs(data);
}

/**
 * Runs a query when its variables change (aborting the previous request), keeps the last data while re-reading so
 * charts do not blink, optionally re-reads on a timer, and after a failure reads again with a growing delay. When a request fails, the last data stays only if it
 * answered the same question (see `dataKey`): data of other variables (the previous range of a chart) is dropped
 * rather than shown under the new ones.
 */
export function useQuery<TData, TVariables>(operation: Operation<TData, TVariables>, variables: TVariables, options: QueryOptions<TData> = {}): QueryState<TData> {
  const [state, setState] = useState<Omit<QueryState<TData>, 'reload'> & { dataKey?: string }>({ loading: !options.skip });
  const [generation, setGeneration] = useState(0);
  const key = JSON.stringify(variables);
  const dataKey = options.dataKey ?? key;
  const optionsRef = useRef(options);
  optionsRef.current = options;
  const lastData = useRef<TData>();
  /** Failed reads in a row of the question `dataKey`, for the backoff; another question starts again at one. */
  const failures = useRef({ dataKey, count: 0 });
  const reload = useCallback(() => setGeneration((g) => g + 1), []);

  useEffect(() => {
    if (options.skip) {
      setState({ loading: false });
      return;
    }
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    setState((previous) => ({ ...previous, loading: true }));
    request(operation, JSON.parse(key) as TVariables, { signal: controller.signal })
      .then((data) => {
        lastData.current = data;
        failures.current = { dataKey, count: 0 };
        setState({ data, dataKey, loading: false });
        const every = pollInterval(optionsRef.current.pollMs, data);
        if (every) timer = setTimeout(reload, every);
      })
      .catch((error: unknown) => {
        if (isAbort(error)) return;
        setState((previous) => ({
          ...(previous.dataKey === dataKey ? { data: previous.data, dataKey } : {}),
          error: error instanceof Error ? error : new ApiError(String(error)),
          loading: false,
        }));
        failures.current = { dataKey, count: failures.current.dataKey === dataKey ? failures.current.count + 1 : 1 };
        // Every failed read is tried again, whether or not the query polls: a first load that failed was never retried.
        const every = pollInterval(optionsRef.current.pollMs, lastData.current) ?? 0;
        timer = setTimeout(reload, Math.max(every, retryDelayMs(failures.current.count)));
      });
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [operation, key, dataKey, generation, options.skip, reload]);

  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** The rendered width of an element, followed as the window resizes (charts draw at their real pixel width). */
export function useElementWidth(ref: RefObject<HTMLElement>, fallback = 640): number {
  const [width, setWidth] = useState(fallback);
  // Measured before the first paint, so a chart never flashes at the fallback width.
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    setWidth(element.clientWidth || fallback);
    const observer = new ResizeObserver((entries) => {
      const entry = entries[0];
      if (entry) setWidth(Math.max(200, Math.floor(entry.contentRect.width)));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref, fallback]);
  return width;
}

export function useDocumentTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · HiveGate` : 'HiveGate';
  }, [title]);
}

/** Calls `callback` every `ms` while `active`; the latest callback is used, so it may close over fresh state. */
export function useInterval(callback: () => void, ms: number, active = true): void {
  const saved = useRef(callback);
  saved.current = callback;
  useEffect(() => {
    if (!active) return;
    const id = setInterval(() => saved.current(), ms);
    return () => clearInterval(id);
  }, [ms, active]);
}
