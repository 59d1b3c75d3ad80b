import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api/graphql.ts';

/**
 * A destructive action behind a second, explicit press: "{action}" asks, then "{action} now" does it and "Keep" (or
 * Escape) takes it back. The subject is named for screen readers only; a failure is shown beside the buttons.
 */
export function ConfirmedAction({ action, busyLabel, subject, onConfirm }: { action: string; busyLabel: string; subject: string; onConfirm: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  // The pressed button gives way to the next step's; focus follows it: "Keep" (the safe one) when asked, the action
  // itself when kept. Only after a press, so that nothing takes the focus when the page first draws.
  const keep = useRef<HTMLButtonElement>(null);
  const ask = useRef<HTMLButtonElement>(null);
  const pressed = useRef(false);
  useEffect(() => {
    if (pressed.current) (confirming ? keep : ask).current?.focus();
  }, [confirming]);
  const setAsking = (value: boolean) => {
    pressed.current = true;
    setConfirming(value);
  };
  const confirm = async () => {
    if (busy) return;
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
        <span
          class="confirm"
          onKeyDown={(event) => {
            if (event.key !== 'Escape' || busy) return;
            event.preventDefault();
            setAsking(false);
          }}
        >
          <button type="button" class="button danger small" onClick={confirm} aria-disabled={busy}>
            {busy ? busyLabel : `${action} now`} <span class="visually-hidden">{subject}</span>
          </button>
          <button type="button" class="button small" ref={keep} onClick={() => !busy && setAsking(false)} aria-disabled={busy}>
            Keep
          </button>
        </span>
      ) : (
        <button type="button" class="button small" ref={ask} onClick={() => setAsking(true)}>
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
