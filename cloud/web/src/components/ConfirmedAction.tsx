import { useState } from 'preact/hooks';
import { messageOf } from '../api/graphql.ts';

/**
 * A destructive action behind a second, explicit press: "{action}" asks, then "{action} now" does it and "Keep"
 * takes it back. The subject is named for screen readers only; a failure is shown beside the buttons.
 */
export function ConfirmedAction({ action, busyLabel, subject, onConfirm }: { action: string; busyLabel: string; subject: string; onConfirm: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };
  return (
    <>
      {confirming ? (
        <span class="confirm">
          <button type="button" class="button danger small" onClick={confirm} disabled={busy}>
            {busy ? busyLabel : `${action} now`} <span class="visually-hidden">{subject}</span>
          </button>
          <button type="button" class="button small" onClick={() => setConfirming(false)} disabled={busy}>
            Keep
          </button>
        </span>
      ) : (
        <button type="button" class="button small" onClick={() => setConfirming(true)}>
          {action} <span class="visually-hidden">{subject}</span>
        </button>
      )}
      {error && (
        <span class="field-error" role="alert">
          {error}
        </span>
      )}
    </>
  );
}
