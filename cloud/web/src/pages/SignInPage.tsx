import { LOGIN_PATTERN, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '@hivegate/shared/auth';
import { useId, useRef, useState } from 'preact/hooks';
import { SignInMutation, SignUpMutation, type User } from '../api/accounts.ts';
import { messageOf, request } from '../api/graphql.ts';
import { PageTitle } from '../components/Layout.tsx';
import { Notice } from '../components/Notice.tsx';
import { asSentence } from '../lib/format.ts';
import { useDocumentTitle } from '../hooks.ts';
import { paths } from '../lib/routes.ts';
import { Link } from '../router.tsx';

/** The ids a field names as its description: its hint, and the error when the error is its own. */
function describedBy(...ids: (string | false)[]): string | undefined {
  const given = ids.filter((value): value is string => Boolean(value));
  return given.length > 0 ? given.join(' ') : undefined;
}

/**
 * `sessionEnded`: the user was signed in until their session expired or was revoked, and is told so. `signUpOpen`:
 * the server takes new accounts; when it does not (SIGNUP=closed), sign-up is not offered and its page says so.
 */
export function SignInPage({ mode, next, sessionEnded = false, signUpOpen = true, onSignedIn }: { mode: 'sign-in' | 'sign-up'; next: string; sessionEnded?: boolean; signUpOpen?: boolean; onSignedIn: (user: User) => void }) {
  const signUp = mode === 'sign-up';
  const closed = signUp && !signUpOpen;
  const title = closed ? 'Sign-up is closed' : signUp ? 'Create your account' : 'Sign in';
  useDocumentTitle(title);
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  /** What went wrong, and the field at fault: none for the server's answers and for a server out of reach. */
  const [error, setError] = useState<{ message: string; field?: 'login' | 'password' } | undefined>();
  const [busy, setBusy] = useState(false);
  const id = useId();
  const errorId = `${id}-error`;
  const loginInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);
  const otherHref = `${signUp ? paths.signIn() : paths.signUp()}${next !== paths.overview() ? `?next=${encodeURIComponent(next)}` : ''}`;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError(undefined);
    // Checked here first, so that an empty field is named, not answered with "login or password is wrong", and the
    // message is tied to the field at fault (the server's answers name no field).
    const missing =
      login.trim() === '' ? { field: 'login' as const, message: 'Enter your login.' }
      : signUp && !LOGIN_PATTERN.test(login.trim()) ? { field: 'login' as const, message: 'The login needs 3–100 letters, digits or . _ @ + - and nothing else.' }
      : password === '' ? { field: 'password' as const, message: 'Enter your password.' }
      : signUp && password.length < MIN_PASSWORD_LENGTH ? { field: 'password' as const, message: `The password needs at least ${MIN_PASSWORD_LENGTH} characters.` }
      : signUp && password.length > MAX_PASSWORD_LENGTH ? { field: 'password' as const, message: `The password may have at most ${MAX_PASSWORD_LENGTH} characters.` }
      : undefined;
    if (missing) {
      setError(missing);
      (missing.field === 'login' ? loginInput : passwordInput).current?.focus();
      return;
    }
    setBusy(true);
    try {
      const user = signUp ? (await request(SignUpMutation, { login, password })).signUp.user : (await request(SignInMutation, { login, password })).signIn.user;
      onSignedIn(user);
    } catch (err) {
      setError({ message: asSentence(messageOf(err)) });
      setBusy(false);
    }
  };

  if (closed) {
    return (
      <div class="auth-page">
        <div class="auth-card">
          <PageTitle>{title}</PageTitle>
          <p class="muted">This server makes accounts only through its administrator: ask them for one, then sign in.</p>
          <p class="auth-switch">
            <Link href={otherHref}>Sign in</Link>
          </p>
        </div>
      </div>
    );
  }

  return (
    <div class="auth-page">
      <div class="auth-card">
        <PageTitle>{title}</PageTitle>
        {signUp ? (
          <p class="muted">Watch your hive entrances, readings and heatmaps in one place.</p>
        ) : sessionEnded ? (
          // An alert: the page changed under the reader without their doing, and said nothing of why.
          <Notice tone="warn" title="Your session has ended." alert>
            <p>It expired, or it was ended elsewhere. Sign in again to carry on.</p>
          </Notice>
        ) : (
          <p class="muted">Welcome back. Sign in to see your apiary.</p>
        )}
        <form onSubmit={submit} class="stack" noValidate>
          <div class="field">
            <label for={`${id}-login`}>Login</label>
            <input
              id={`${id}-login`}
              ref={loginInput}
              name="login"
              autocomplete="username"
              autocapitalize="none"
              spellcheck={false}
              required
              value={login}
              onInput={(e) => setLogin(e.currentTarget.value)}
              aria-describedby={describedBy(signUp && `${id}-login-hint`, error?.field === 'login' && errorId)}
              aria-invalid={error?.field === 'login' ? true : undefined}
            />
            {signUp && (
              <p class="hint" id={`${id}-login-hint`}>
                3–100 letters, digits or . _ @ + -
              </p>
            )}
          </div>
          <div class="field">
            <label for={`${id}-password`}>Password</label>
            <input
              id={`${id}-password`}
              ref={passwordInput}
              name="password"
              type="password"
              autocomplete={signUp ? 'new-password' : 'current-password'}
              required
              minLength={signUp ? MIN_PASSWORD_LENGTH : undefined}
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              aria-describedby={describedBy(signUp && `${id}-password-hint`, error?.field === 'password' && errorId)}
              aria-invalid={error?.field === 'password' ? true : undefined}
            />
            {signUp && (
              <p class="hint" id={`${id}-password-hint`}>
                At least {MIN_PASSWORD_LENGTH} characters.
              </p>
            )}
          </div>
          {error && (
            <Notice tone="error" id={errorId}>
              {error.message}
            </Notice>
          )}
          <button type="submit" class="button primary wide" aria-disabled={busy}>
            {busy ? (signUp ? 'Creating account…' : 'Signing in…') : signUp ? 'Create account' : 'Sign in'}
          </button>
        </form>
        {(signUp || signUpOpen) && (
          <p class="auth-switch">
            {signUp ? 'Already have an account? ' : 'New to HiveGate? '}
            <Link href={otherHref}>{signUp ? 'Sign in' : 'Create an account'}</Link>
          </p>
        )}
      </div>
    </div>
  );
}
