import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

type Tone = 'info' | 'ok' | 'warn' | 'error';

/** Each error message shown as an alert now, and the notice that shows it. */
const alertHolders = new Map<string, object>();

/**
 * Whether this notice is the one to announce `key`: the first shown of those with the same key. During an outage
 * every part of the box page failed alike, and a screen reader read out the same error four times over.
 */
function useFirstWithKey(key: string | undefined): boolean {
  const [self] = useState(() => ({}));
  if (key !== undefined && !alertHolders.has(key)) alertHolders.set(key, self);
  useEffect(
    () => () => {
      if (key !== undefined && alertHolders.get(key) === self) alertHolders.delete(key);
    },
    [key, self],
  );
  return key === undefined || alertHolders.get(key) === self;
}

/**
 * A message box. Errors use role="alert" (read out at once), only the first of those shown with the same `alertKey`;
 * other tones are plain text unless `live` makes them a polite status region, or `alert` an alert (news the reader
 * must hear at once, shown with the page). `id` lets a field name it as its description (aria-describedby).
 */
export function Notice({
  tone = 'info',
  title,
  children,
  live = false,
  alert = false,
  id,
  alertKey,
}: {
  tone?: Tone;
  title?: string;
  children?: ComponentChildren;
  live?: boolean;
  alert?: boolean;
  id?: string;
  alertKey?: string;
}) {
  const announce = useFirstWithKey(tone === 'error' ? alertKey : undefined);
  const role = tone === 'error' ? (announce ? 'alert' : undefined) : alert ? 'alert' : live ? 'status' : undefined;
  return (
    <div id={id} class={`notice notice-${tone}`} role={role}>
      {title && <p class="notice-title">{title}</p>}
      {children && <div class="notice-body">{children}</div>}
    </div>
  );
}

/** Why something could not be read, and a button to read it again. */
export function LoadFailed({ title, message, onRetry }: { title: string; message: string; onRetry: () => void }) {
  return (
    <Notice tone="error" title={title} alertKey={message}>
      <p>{message}</p>
      <button type="button" class="button" onClick={onRetry}>
        Try again
      </button>
    </Notice>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}
