/** The app's pages and their paths. None starts with a path the server keeps for itself (/graphql, /api, …). */

export type Route =
  | { name: 'overview' }
  | { name: 'sign-in' }
  | { name: 'sign-up' }
  | { name: 'hive'; hiveId: string }
  | { name: 'box'; boxId: string }
  | { name: 'profile' }
  | { name: 'not-found'; path: string };

export const paths = {
  overview: () => '/',
  signIn: () => '/sign-in',
  signUp: () => '/sign-up',
  hive: (hiveId: string) => `/hives/${encodeURIComponent(hiveId)}`,
  box: (boxId: string) => `/boxes/${encodeURIComponent(boxId)}`,
  profile: () => '/profile',
};

function decode(segment: string): string | undefined {
  try {
    const value = decodeURIComponent(segment);
    return value === '' ? undefined : value;
  } catch {
    return undefined;
  }
}

export function matchRoute(pathname: string): Route {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  if (path === '/' || path === '') return { name: 'overview' };
  if (path === '/sign-in') return { name: 'sign-in' };
  if (path === '/sign-up') return { name: 'sign-up' };
  if (path === '/profile') return { name: 'profile' };
  const hive = /^\/hives\/([^/]+)$/.exec(path);
  const hiveId = hive && decode(hive[1]!);
  if (hiveId) return { name: 'hive', hiveId };
  const box = /^\/boxes\/([^/]+)$/.exec(path);
  const boxId = box && decode(box[1]!);
  if (boxId) return { name: 'box', boxId };
  return { name: 'not-found', path: pathname };
}

/** Pages a signed-out visitor may see; every other page sends them to sign in first. */
export function isPublicRoute(route: Route): boolean {
  return route.name === 'sign-in' || route.name === 'sign-up' || route.name === 'not-found';
}

/** Where to go after signing in: only a path of this app, never another site (`//evil.example`). */
export function safeNextPath(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return paths.overview();
  const route = matchRoute(next.split(/[?#]/)[0]!);
  return route.name === 'not-found' || isPublicRoute(route) ? paths.overview() : next;
}
