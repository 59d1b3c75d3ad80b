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

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}
