import { SCOPES, type Scope } from '@hivegate/shared/auth';
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import {
  ApiTokensQuery,
  boxIdsFromList,
  ChangePasswordMutation,
  CreateApiTokenMutation,
  RevokeApiTokenMutation,
  RevokeWebSessionMutation,
  SignOutOtherSessionsMutation,
  WebSessionsQuery,
  type ApiToken,
  type User,
  type WebSession,
} from '../api/accounts.ts';
import { ApiError, messageOf, request } from '../api/graphql.ts';
import { ConfirmedAction } from '../components/ConfirmedAction.tsx';
import { PageTitle } from '../components/Layout.tsx';
import { Loading, Notice } from '../components/Notice.tsx';
import { useDocumentTitle, useQuery, type QueryState } from '../hooks.ts';
import { formatDate, formatDateTime, formatRelative } from '../lib/format.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordChangedMessage, passwordChangeProblem, serverPasswordProblem, type FieldProblem, type PasswordField } from '../lib/password-change.ts';

const SCOPE_HELP: Record<Scope, string> = {
  ingest: 'send sensor readings, entrance counts and bee trajectories',
  device: 'act as an entrance camera (live streaming, commands, bee trajectories)',
  read: 'read data through the API',
  control: 'start live streams and upload clips through the API',
};
const DEFAULT_SCOPES: Scope[] = ['ingest', 'device'];

/** The new token, shown this once, with a copy button. */
function TokenReveal({ token, name, onDone }: { token: string; name: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | undefined>();
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  // Keyboard and screen-reader users land on the token (selected, ready to copy), not back at the top of the page.
  useEffect(() => input.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard access (plain http on a LAN address): select the text so Ctrl+C / ⌘C copies it.
      input.current?.focus();
      input.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C on a Mac) to copy.');
    }
  };
  return (
    <div class="card token-reveal" role="region" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Token “{name}” created</h3>
      <p>
        <strong>Copy it now:</strong> it is shown only once. Devices send it as <code>Authorization: Bearer &lt;token&gt;</code>.
      </p>
      <div class="copy-row">
        <label for={`${id}-value`} class="visually-hidden">
          New API token
        </label>
        <input id={`${id}-value`} ref={input} class="token-value" readOnly value={token} onFocus={(e) => e.currentTarget.select()} spellcheck={false} />
        <button type="button" class="button primary" onClick={copy}>
          Copy
        </button>
      </div>
      <p class="small" role="status">
        {copied}
      </p>
      <button type="button" class="button" onClick={onDone}>
        Done, I have stored it
      </button>
    </div>
  );
}

function CreateTokenForm({ onCreated }: { onCreated: (token: string, apiToken: ApiToken) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(DEFAULT_SCOPES);
  const [boxes, setBoxes] = useState('');
  /** What went wrong, and the field it is about (none for the server's refusals). */
  const [error, setError] = useState<{ message: string; field?: 'name' | 'scopes' } | undefined>();
  const [busy, setBusy] = useState(false);
  const id = useId();
  const errorId = `${id}-error`;
  const nameInput = useRef<HTMLInputElement>(null);
  const permissions = useRef<HTMLFieldSetElement>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError(undefined);
    // Focus goes to the field to fix (not left on the button), which names the message as its description.
    if (name.trim() === '') {
      setError({ message: 'Give the token a name, such as the device that will use it.', field: 'name' });
      nameInput.current?.focus();
      return;
    }
    if (scopes.length === 0) {
      setError({ message: 'Choose at least one permission.', field: 'scopes' });
      permissions.current?.querySelector('input')?.focus();
      return;
    }
    const boxIds = boxIdsFromList(boxes);
    setBusy(true);
    try {
      const { createApiToken } = await request(CreateApiTokenMutation, { name: name.trim(), scopes, boxIds: boxIds.length > 0 ? boxIds : null });
      setName('');
      setBoxes('');
      setScopes(DEFAULT_SCOPES);
      onCreated(createApiToken.token, createApiToken.apiToken);
    } catch (err) {
      setError({ message: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card stack token-form" onSubmit={submit} aria-labelledby={`${id}-title`} noValidate>
      <h3 id={`${id}-title`}>Create an API token</h3>
      <div class="field">
        <label for={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          ref={nameInput}
          value={name}
          maxLength={100}
          onInput={(e) => setName(e.currentTarget.value)}
          aria-describedby={error?.field === 'name' ? `${id}-name-hint ${errorId}` : `${id}-name-hint`}
          aria-invalid={error?.field === 'name' ? true : undefined}
        />
        <p class="hint" id={`${id}-name-hint`}>
          For example “scale hive 3” or “entrance camera”.
        </p>
      </div>
      <fieldset class="field checks" ref={permissions} aria-describedby={error?.field === 'scopes' ? errorId : undefined}>
        <legend>Permissions</legend>
        {SCOPES.map((scope) => (
          <label key={scope} class="check">
            <input
              type="checkbox"
              name="scopes"
              value={scope}
              checked={scopes.includes(scope)}
              onChange={(e) => setScopes((current) => (e.currentTarget.checked ? [...current, scope] : current.filter((s) => s !== scope)))}
            />
            <span>
              <strong>{scope}</strong> — {SCOPE_HELP[scope]}
            </span>
          </label>
        ))}
      </fieldset>
      <div class="field">
        <label for={`${id}-boxes`}>Only for boxes (optional)</label>
        <input id={`${id}-boxes`} value={boxes} onInput={(e) => setBoxes(e.currentTarget.value)} aria-describedby={`${id}-boxes-hint`} />
        <p class="hint" id={`${id}-boxes-hint`}>
          Box ids separated by commas. Leave empty to allow every box.
        </p>
      </div>
      {error && (
        <Notice tone="error" id={errorId}>
          {error.message}
        </Notice>
      )}
      <div class="actions">
        <button type="submit" class="button primary" aria-disabled={busy}>
          {busy ? 'Creating…' : 'Create token'}
        </button>
      </div>
    </form>
  );
}

/**
 * A cell that also carries its column's name, shown only where the table is drawn as one card per token (narrow
 * screens, whose header row is hidden); screen readers get the column header instead, as on the desktop.
 */
function LabelledCell({ label, title, children }: { label: string; title?: string; children: ComponentChildren }) {
  return (
    <td role="cell" title={title}>
      <span class="cell-label" aria-hidden="true">
        {label}
      </span>
      {children}
    </td>
  );
}

function TokenRow({ token, onRevoked, focusName = false }: { token: ApiToken; onRevoked: () => void; focusName?: boolean }) {
  const nameCell = useRef<HTMLTableCellElement>(null);
  const [revokedHere, setRevokedHere] = useState(false);
  useEffect(() => {
    if (focusName) nameCell.current?.focus();
  }, [focusName]);
  // Once revoked, the row has no button left to hold the focus: it goes to the row's name, which reads the new status.
  useEffect(() => {
    if (revokedHere && token.revokedAt) nameCell.current?.focus();
  }, [revokedHere, token.revokedAt]);
  const expired = token.expiresAt !== null && Date.parse(token.expiresAt) < Date.now();
  const status = token.revokedAt ? `Revoked ${formatDate(token.revokedAt)}` : expired ? 'Expired' : 'Active';
  return (
    <tr role="row" class={token.revokedAt || expired ? 'inactive' : undefined}>
      <th scope="row" role="rowheader" ref={nameCell} tabIndex={-1}>
        {token.name}
      </th>
      <LabelledCell label="Permissions">{token.scopes.join(', ')}</LabelledCell>
      <LabelledCell label="Boxes">{token.boxIds && token.boxIds.length > 0 ? token.boxIds.join(', ') : 'all'}</LabelledCell>
      <LabelledCell label="Created">{formatDate(token.createdAt)}</LabelledCell>
      <LabelledCell label="Last used" title={token.lastUsedAt ? formatDateTime(token.lastUsedAt) : undefined}>
        {token.lastUsedAt ? formatRelative(token.lastUsedAt) : 'never'}
      </LabelledCell>
      <LabelledCell label="Status">{status}</LabelledCell>
      <td role="cell" class="row-actions">
        {!token.revokedAt && (
          <ConfirmedAction
            action="Revoke"
            busyLabel="Revoking…"
            subject={token.name}
            onConfirm={async () => {
              await request(RevokeApiTokenMutation, { id: token.id });
              setRevokedHere(true);
              onRevoked();
            }}
          />
        )}
      </td>
    </tr>
  );
}

/** A password input of the change form: its hint and, when it is the field at fault, the error describe it. */
function PasswordInput({
  id,
  label,
  field,
  value,
  onInput,
  autocomplete,
  hint,
  problem,
  errorId,
  inputRef,
}: {
  id: string;
  label: string;
  field: PasswordField;
  value: string;
  onInput: (value: string) => void;
  autocomplete: 'current-password' | 'new-password';
  hint?: string;
  problem: FieldProblem | undefined;
  errorId: string;
  inputRef: { current: HTMLInputElement | null };
}) {
  const atFault = problem?.field === field;
  const describedBy = [hint ? `${id}-hint` : undefined, atFault ? errorId : undefined].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        ref={inputRef}
        type="password"
        autocomplete={autocomplete}
        maxLength={MAX_PASSWORD_LENGTH}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        aria-describedby={describedBy || undefined}
        aria-invalid={atFault ? true : undefined}
      />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

/** Changes the password; the server signs out the other sessions and keeps this one and the API tokens. */
function ChangePasswordForm({ login, onChanged }: { login: string; onChanged: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [problem, setProblem] = useState<FieldProblem | undefined>();
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const id = useId();
  const errorId = `${id}-error`;
  const inputs: Record<PasswordField, { current: HTMLInputElement | null }> = { current: useRef(null), next: useRef(null), repeat: useRef(null) };

  const refuse = (found: FieldProblem) => {
    setProblem(found);
    // The field to fix takes the focus, and reads the message as its description.
    if (found.field) inputs[found.field].current?.focus();
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setProblem(undefined);
    setDone('');
    const found = passwordChangeProblem({ current, next, repeat });
    if (found) return refuse(found);
    setBusy(true);
    try {
      const { changePassword } = await request(ChangePasswordMutation, { currentPassword: current, newPassword: next });
      setCurrent('');
      setNext('');
      setRepeat('');
      setDone(passwordChangedMessage(changePassword.otherSessionsSignedOut));
      onChanged();
    } catch (err) {
      const field = err instanceof ApiError ? err.errors[0]?.extensions?.field : undefined;
      refuse(serverPasswordProblem({ message: messageOf(err), field }));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card stack password-form" onSubmit={submit} aria-labelledby={`${id}-title`} noValidate>
      <h3 id={`${id}-title`}>Change password</h3>
      {/* For password managers, which file the new password under this login. */}
      <input type="text" name="username" autocomplete="username" value={login} readOnly hidden />
      <PasswordInput id={`${id}-current`} label="Current password" field="current" value={current} onInput={setCurrent} autocomplete="current-password" problem={problem} errorId={errorId} inputRef={inputs.current} />
      <PasswordInput
        id={`${id}-next`}
        label="New password"
        field="next"
        value={next}
        onInput={setNext}
        autocomplete="new-password"
        hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
        problem={problem}
        errorId={errorId}
        inputRef={inputs.next}
      />
      <PasswordInput id={`${id}-repeat`} label="Repeat the new password" field="repeat" value={repeat} onInput={setRepeat} autocomplete="new-password" problem={problem} errorId={errorId} inputRef={inputs.repeat} />
      <p class="hint">Changing it signs out your other sign-ins. This one stays, and so do your API tokens: devices keep sending.</p>
      {problem && (
        <Notice tone="error" id={errorId}>
          {problem.message}
        </Notice>
      )}
      <p class="small form-status" role="status">
        {done}
      </p>
      <div class="actions">
        <button type="submit" class="button primary" aria-disabled={busy}>
          {busy ? 'Changing…' : 'Change password'}
        </button>
      </div>
    </form>
  );
}

const sessionName = (session: WebSession) => session.client ?? 'Unknown browser';

function SessionItem({ session, onSignedOut }: { session: WebSession; onSignedOut: (name: string) => void }) {
  const name = sessionName(session);
  return (
    <li class="session-item">
      <div class="session-about">
        <p class="session-name">
          <strong>{name}</strong>
          {session.current && <span class="badge badge-ok">This browser</span>}
        </p>
        <p class="small muted">
          Signed in on <span title={formatDateTime(session.createdAt)}>{formatDate(session.createdAt)}</span>
          {' · '}
          {session.current ? 'in use now' : <span title={session.lastUsedAt ? formatDateTime(session.lastUsedAt) : undefined}>last used {formatRelative(session.lastUsedAt ?? session.createdAt)}</span>}
          {session.expiresAt && (
            <>
              {' · '}
              ends <span title={formatDateTime(session.expiresAt)}>{formatDate(session.expiresAt)}</span>
            </>
          )}
        </p>
      </div>
      {!session.current && (
        <div class="session-actions">
          <ConfirmedAction
            action="Sign out"
            busyLabel="Signing out…"
            subject={`${name}, signed in ${formatDate(session.createdAt)}`}
            onConfirm={async () => {
              await request(RevokeWebSessionMutation, { id: session.id });
              onSignedOut(name);
            }}
          />
        </div>
      )}
    </li>
  );
}

/** Where the user is signed in: sign out one browser, or every one but this. */
function SessionsCard({ sessions }: { sessions: QueryState<{ webSessions: WebSession[] }> }) {
  const [said, setSaid] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const list = sessions.data?.webSessions ?? [];
  const others = list.filter((session) => !session.current).length;
  // The row or button pressed is gone once done: the focus goes to the list's heading, and the status says what happened.
  const after = (message: string) => {
    setSaid(message);
    sessions.reload();
    heading.current?.focus();
  };
  return (
    <div class="card sessions-card">
      <h3 ref={heading} tabIndex={-1}>
        Where you are signed in
      </h3>
      {sessions.error && <Notice tone="error">{sessions.error.message}</Notice>}
      {sessions.loading && !sessions.data ? (
        <Loading label="Loading sign-ins…" />
      ) : (
        <ul class="session-list" aria-label="Signed-in browsers">
          {list.map((session) => (
            <SessionItem key={session.id} session={session} onSignedOut={(name) => after(`Signed out ${name}.`)} />
          ))}
        </ul>
      )}
      <p class="small form-status" role="status">
        {said}
      </p>
      {others > 0 && (
        <div class="actions">
          <ConfirmedAction
            action="Sign out everywhere else"
            busyLabel="Signing out…"
            subject=""
            onConfirm={async () => {
              const { signOutOtherSessions } = await request(SignOutOtherSessionsMutation, {});
              after(`Signed out ${signOutOtherSessions === 1 ? 'the other session' : `${signOutOtherSessions} other sessions`}.`);
            }}
          />
        </div>
      )}
    </div>
  );
}

/** The account, where it is signed in and its password, and its API tokens: create (shown once), list, revoke. */
export function ProfilePage({ user }: { user: User }) {
  useDocumentTitle('Profile');
  const tokens = useQuery(ApiTokensQuery, {});
  const sessions = useQuery(WebSessionsQuery, {});
  const [created, setCreated] = useState<{ token: string; name: string; id: string } | undefined>();
  // Once the new token is stored and its reveal closes, focus goes to the token's row (it fell to the page before).
  const [focusTokenId, setFocusTokenId] = useState<string | undefined>();
  const list = tokens.data?.apiTokens ?? [];
  const ordered = [...list].sort((a, b) => Number(Boolean(a.revokedAt)) - Number(Boolean(b.revokedAt)) || Date.parse(b.createdAt) - Date.parse(a.createdAt));

  return (
    <>
      <PageTitle>Profile</PageTitle>
      <section class="card" aria-labelledby="account-heading">
        <h2 id="account-heading">Account</h2>
        <dl class="meta">
          <div>
            <dt>Login</dt>
            <dd>{user.login}</dd>
          </div>
          <div>
            <dt>Member since</dt>
            <dd>{formatDate(user.createdAt)}</dd>
          </div>
        </dl>
      </section>
      <section aria-labelledby="sign-ins-heading" class="section">
        <h2 id="sign-ins-heading">Sign-ins</h2>
        <p class="muted">The browsers signed in to your account. Sign out one you do not know, or change your password if someone else may have it.</p>
        <div class="token-layout">
          <ChangePasswordForm login={user.login} onChanged={sessions.reload} />
          <SessionsCard sessions={sessions} />
        </div>
      </section>
      <section aria-labelledby="tokens-heading" class="section">
        <h2 id="tokens-heading">API tokens</h2>
        <p class="muted">Scales, sensors and entrance cameras authenticate with a token. Revoke a token when a device is lost or retired.</p>
        {created && (
          <TokenReveal
            token={created.token}
            name={created.name}
            onDone={() => {
              setFocusTokenId(created.id);
              setCreated(undefined);
            }}
          />
        )}
        <div class="token-layout">
          <CreateTokenForm
            onCreated={(token, apiToken) => {
              setCreated({ token, name: apiToken.name, id: apiToken.id });
              tokens.reload();
            }}
          />
          <div class="card tokens-card">
            <h3>Your tokens</h3>
            {tokens.error && <Notice tone="error">{tokens.error.message}</Notice>}
            {tokens.loading && !tokens.data ? (
              <Loading label="Loading tokens…" />
            ) : ordered.length === 0 ? (
              <p class="empty">No tokens yet.</p>
            ) : (
              <div class="table-wrap tokens-wrap" role="region" aria-label="API tokens" tabIndex={0}>
                {/* The explicit roles keep the table a table for screen readers where narrow screens restyle it as cards
                    (some browsers drop a table's semantics once its display changes). */}
                <table class="data-table tokens-table" role="table">
                  <thead role="rowgroup">
                    <tr role="row">
                      <th scope="col" role="columnheader">Name</th>
                      <th scope="col" role="columnheader">Permissions</th>
                      <th scope="col" role="columnheader">Boxes</th>
                      <th scope="col" role="columnheader">Created</th>
                      <th scope="col" role="columnheader">Last used</th>
                      <th scope="col" role="columnheader">Status</th>
                      <th scope="col" role="columnheader">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody role="rowgroup">
                    {ordered.map((token) => (
                      <TokenRow key={token.id} token={token} onRevoked={tokens.reload} focusName={token.id === focusTokenId} />
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
        </div>
      </section>
    </>
  );
}
