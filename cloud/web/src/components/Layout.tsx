import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { User } from '../api/accounts.ts';
import { paths, type Route } from '../lib/routes.ts';
import { lastNavigationKind, Link, restoreScrollPosition } from '../router.tsx';

function Logo() {
  return (
    <svg class="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
      <path d="M16 2 28 9v14l-12 7L4 23V9z" fill="var(--accent)" />
      <path d="M16 9 22 12.5v7L16 23l-6-3.5v-7z" fill="var(--accent-ink)" opacity=".9" />
    </svg>
  );
}

function NavLink({ href, current, children }: { href: string; current: boolean; children: ComponentChildren }) {
  return (
    <Link href={href} class="nav-link" aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  );
}

/**
 * The page frame: skip link, banner with navigation, the main landmark. After an in-app navigation focus moves to
 * the new page's heading, so keyboard and screen-reader users land where the content starts.
 */
export function Layout({ user, route, pathname, onSignOut, children }: { user?: User; route: Route; pathname: string; onSignOut: () => void; children: ComponentChildren }) {
  const main = useRef<HTMLElement>(null);
  const firstRender = useRef(true);
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    // Back and Forward return to where the page was left, and leave the focus alone: a jump to the top and to the
    // heading lost the reader's place on every return to a long page.
    if (lastNavigationKind() === 'pop') {
      restoreScrollPosition();
      return;
    }
    const heading = main.current?.querySelector<HTMLElement>('h1');
    (heading ?? main.current)?.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  }, [pathname]);

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="site-header">
        <div class="header-inner">
          <Link href={paths.overview()} class="brand">
            <Logo />
            <span>HiveGate</span>
          </Link>
          {user && (
            <nav aria-label="Main" class="main-nav">
              <NavLink href={paths.overview()} current={route.name === 'overview'}>
                Apiary
              </NavLink>
              <NavLink href={paths.profile()} current={route.name === 'profile'}>
                Profile
              </NavLink>
              <button type="button" class="link-button nav-link" onClick={onSignOut}>
                Sign out <span class="visually-hidden">({user.login})</span>
              </button>
            </nav>
          )}
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {children}
      </main>
      <footer class="site-footer">
        <p>HiveGate — open entrance monitoring for beekeepers.</p>
      </footer>
    </>
  );
}

/** A page heading that can take focus after navigation. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  return (
    <h1 tabIndex={-1} class="page-title">
      {children}
    </h1>
  );
}

export function Breadcrumbs({ items }: { items: { href?: string; label: string }[] }) {
  return (
    <nav aria-label="Breadcrumb" class="breadcrumbs">
      <ol>
        {items.map((item, index) => (
          <li key={index}>{item.href ? <Link href={item.href}>{item.label}</Link> : <span aria-current="page">{item.label}</span>}</li>
        ))}
      </ol>
    </nav>
  );
}
