import type { ComponentChildren } from 'preact';

type Tone = 'info' | 'ok' | 'warn' | 'error';

/**
 * A message box. Errors use role="alert" (read out at once); other tones are plain text unless `live` makes them a
 * polite status region. `id` lets a field name it as its description (aria-describedby).
 */
export function Notice({ tone = 'info', title, children, live = false, id }: { tone?: Tone; title?: string; children?: ComponentChildren; live?: boolean; id?: string }) {
  const role = tone === 'error' ? 'alert' : live ? 'status' : undefined;
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
    <Notice tone="error" title={title}>
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
