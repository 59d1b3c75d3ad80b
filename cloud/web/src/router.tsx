/** History-API routing: links change the URL without reloading, and Back/Forward work. */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

/** How the location last changed: a link ('push'), a change in place such as a new range ('replace'), or Back/Forward ('pop'). */
export type NavigationKind = 'push' | 'replace' | 'pop';
let lastKind: NavigationKind = 'push';

export function lastNavigationKind(): NavigationKind {
  return lastKind;
}

// Each history entry has a key, under which its scroll position is kept while it is left, for Back and Forward to
// return to. The browser's own restoration scrolls before this app has drawn the page again, so it is turned off.
let entryKeys = 0;
const newKey = () => `${Date.now().toString(36)}-${++entryKeys}`;
const keyOf = (state: unknown) => (state && typeof state === 'object' && 'key' in state && typeof state.key === 'string' ? state.key : undefined);
let activeKey = keyOf(window.history.state) ?? newKey();
window.history.replaceState({ ...(window.history.state as object | null), key: activeKey }, '');
if ('scrollRestoration' in window.history) window.history.scrollRestoration = 'manual';
const scrollPositions = new Map<string, number>();
/** Set from Back/Forward until the entry's position is restored: scrolling meanwhile is the page changing, not the user. */
let restoring = false;

window.addEventListener('scroll', () => {
  if (!restoring) scrollPositions.set(activeKey, window.scrollY);
}, { passive: true });

window.addEventListener('popstate', (event) => {
  lastKind = 'pop';
  restoring = true;
  activeKey = keyOf(event.state) ?? newKey();
  listeners.forEach((listener) => listener());
});

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const current = window.location.pathname + window.location.search;
  if (to === current && !options.replace) return;
  lastKind = options.replace ? 'replace' : 'push';
  restoring = false;
  if (options.replace) {
    window.history.replaceState({ key: activeKey }, '', to);
  } else {
    scrollPositions.set(activeKey, window.scrollY);
    activeKey = newKey();
    window.history.pushState({ key: activeKey }, '', to);
  }
  listeners.forEach((listener) => listener());
}

/** How long a page returned to may take to grow tall enough for its old position (its data loads first). */
const RESTORE_WAIT_MS = 3000;

/**
 * After Back or Forward, scrolls to where the entry was left, once the page is drawn: and again as it grows while its
 * data arrives, until it is there, the user scrolls or types, or a few seconds have gone by.
 */
export function restoreScrollPosition(): void {
  const target = scrollPositions.get(activeKey) ?? 0;
  const started = Date.now();
  const userInput = ['wheel', 'touchstart', 'keydown', 'pointerdown'] as const;
  const observer = new ResizeObserver(() => attempt());
  const stop = () => {
    observer.disconnect();
    for (const type of userInput) window.removeEventListener(type, stop);
    restoring = false;
  };
  const attempt = () => {
    window.scrollTo(0, target);
    if (Math.abs(window.scrollY - target) < 2 || Date.now() - started > RESTORE_WAIT_MS) stop();
  };
  attempt();
  if (!restoring) return;
  for (const type of userInput) window.addEventListener(type, stop, { passive: true });
  observer.observe(document.body);
}

export interface AppLocation {
  pathname: string;
  search: string;
}

function readLocation(): AppLocation {
  return { pathname: window.location.pathname, search: window.location.search };
}

export function useLocation(): AppLocation {
  const [location, setLocation] = useState(readLocation);
  useEffect(() => {
    const update = () => setLocation(readLocation());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return location;
}

type LinkProps = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> & { href: string; children: ComponentChildren };

/** An ordinary link (middle-click, new tab and copy work) that navigates in place on a plain click. */
export function Link({ href, children, onClick, ...rest }: LinkProps) {
  return (
    <a
      {...rest}
      href={href}
      onClick={(event) => {
        if (typeof onClick === 'function') onClick(event);
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
