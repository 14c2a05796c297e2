/**
 * The foot of every form dialog: why the last attempt was refused (when it was), Cancel, and the one submit
 * button, which says what it is doing while the request is in flight and cannot be pressed twice.
 */
export interface DialogActionsProps {
  /** Why the host refused the last attempt; shown as an alert above the buttons. */
  failure?: string | null;
  /** The alert's accessible name (e.g. "Why the fork was refused"). */
  failureLabel?: string;
  onCancel: () => void;
  /** The submit button's label, and its label while `busy`. */
  submit: string;
  busyText: string;
  busy: boolean;
  /** Whether the form cannot be sent as it stands (the button is off while busy as well). */
  disabled: boolean;
}

/** Failure alert, Cancel and submit, in the order and with the roles every dialog uses. */
export function DialogActions({ failure, failureLabel, onCancel, submit, busyText, busy, disabled }: DialogActionsProps) {
  return (
    <>
      {failure && (
        <p className="error-text" role="alert" aria-label={failureLabel}>
          {failure}
        </p>
      )}
      <div className="row-actions end">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={disabled || busy} aria-busy={busy}>
          {busy ? busyText : submit}
        </button>
      </div>
    </>
  );
}
