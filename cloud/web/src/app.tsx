import { useCallback, useEffect, useState } from 'preact/hooks';
import { MeQuery, SignOutMutation, type User } from './api/accounts.ts';
import { messageOf, onUnauthenticated, request } from './api/graphql.ts';
import { Layout } from './components/Layout.tsx';
import { LoadFailed, Loading } from './components/Notice.tsx';
import { isPublicRoute, matchRoute, paths, safeNextPath } from './lib/routes.ts';
import { EntrancePage } from './pages/EntrancePage.tsx';
import { HivePage } from './pages/HivePage.tsx';
import { NotFoundPage } from './pages/NotFoundPage.tsx';
import { OverviewPage } from './pages/OverviewPage.tsx';
import { ProfilePage } from './pages/ProfilePage.tsx';
import { SignInPage } from './pages/SignInPage.tsx';
import { navigate, useLocation } from './router.tsx';

/** `ended`: the session expired or was revoked (not signed out here), which the sign-in page says. */
type Session = { state: 'checking' } | { state: 'failed'; message: string } | { state: 'signed-out'; ended?: boolean } | { state: 'signed-in'; user: User };

/**
 * Whether this browser was last signed in, kept across visits: the session cookie is out of reach of scripts, so
 * without it a visit after the session expired could not tell an ended session from a first visit.
 */
const SIGNED_IN_KEY = 'hivegate.signed-in';

function rememberSignedIn(signedIn: boolean): void {
  try {
    if (signedIn) localStorage.setItem(SIGNED_IN_KEY, '1');
    else localStorage.removeItem(SIGNED_IN_KEY);
  } catch {
    // Storage refused (a private window, a policy): the sign-in page then just does not say why.
  }
}

function wasSignedIn(): boolean {
  try {
    return localStorage.getItem(SIGNED_IN_KEY) === '1';
  } catch {
    return false;
  }
}

export function App() {
  const location = useLocation();
  const route = matchRoute(location.pathname);
  const [session, setSession] = useState<Session>({ state: 'checking' });
  const [signUpOpen, setSignUpOpen] = useState(true);

  const check = useCallback(() => {
    setSession({ state: 'checking' });
    request(MeQuery, {})
      .then(({ me, signUpOpen: open }) => {
        setSignUpOpen(open);
        setSession(me ? { state: 'signed-in', user: me } : { state: 'signed-out', ended: wasSignedIn() });
      })
      .catch((err: unknown) => setSession({ state: 'failed', message: messageOf(err) }));
  }, []);

  useEffect(check, [check]);
  // A session that expires or is revoked while the app is open sends the user back to sign in, told why.
  useEffect(() => onUnauthenticated(() => setSession((s) => (s.state === 'signed-in' ? { state: 'signed-out', ended: true } : s))), []);
  useEffect(() => {
    if (session.state === 'signed-in') rememberSignedIn(true);
  }, [session.state]);

  const here = location.pathname + location.search;
  const next = safeNextPath(new URLSearchParams(location.search).get('next'));
  const mustSignIn = session.state === 'signed-out' && !isPublicRoute(route);
  const alreadyIn = session.state === 'signed-in' && (route.name === 'sign-in' || route.name === 'sign-up');
  useEffect(() => {
    if (mustSignIn) navigate(`${paths.signIn()}${route.name === 'overview' ? '' : `?next=${encodeURIComponent(here)}`}`, { replace: true });
    else if (alreadyIn) navigate(next, { replace: true });
  }, [mustSignIn, alreadyIn, here, next, route.name]);

  const signOut = async () => {
    try {
      await request(SignOutMutation, {});
    } catch {
      // Signed out locally either way; the cookie is HttpOnly, so only the server could clear it, and it expires.
    } finally {
      rememberSignedIn(false);
      setSession({ state: 'signed-out' });
      navigate(paths.signIn());
    }
  };

  const user = session.state === 'signed-in' ? session.user : undefined;
  let page;
  if (session.state === 'checking' || mustSignIn || alreadyIn) {
    page = <Loading />;
  } else if (session.state === 'failed') {
    page = <LoadFailed title="HiveGate could not reach its server." message={session.message} onRetry={check} />;
  } else {
    switch (route.name) {
      case 'sign-in':
      case 'sign-up':
        page = (
          <SignInPage
            key={route.name}
            mode={route.name}
            next={next}
            signUpOpen={signUpOpen}
            sessionEnded={session.state === 'signed-out' && session.ended === true}
            onSignedIn={(u) => setSession({ state: 'signed-in', user: u })}
          />
        );
        break;
      case 'overview':
        page = <OverviewPage />;
        break;
      case 'hive':
        page = <HivePage key={route.hiveId} hiveId={route.hiveId} />;
        break;
      case 'box':
        page = <EntrancePage key={route.boxId} boxId={route.boxId} />;
        break;
      case 'profile':
        page = user ? <ProfilePage user={user} /> : <Loading />;
        break;
      case 'not-found':
        page = <NotFoundPage path={route.path} />;
        break;
    }
  }

  return (
    <Layout user={user} route={route} pathname={location.pathname} onSignOut={signOut}>
      {page}
    </Layout>
  );
}
