/**
 * A modal dialog over the native <dialog>: the browser keeps focus inside it
 * and closes it on Escape; this puts focus on its first field (or the control
 * marked data-autofocus) when it opens, and back on the control that opened
 * it when it closes (or, when what it did took that control away, on the
 * task's heading), so a keyboard user never loses their place.
 */
import { useEffect, useRef, type ReactNode } from 'react';

interface Props {
  open: boolean;
  /** The id of the dialog's heading: its accessible name. */
  labelledBy: string;
  /** The person closed it (Escape, a Cancel button). */
  onClose(): void;
  className?: string;
  children: ReactNode;
}

const FOCUSABLE = 'input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled]), [href]';

export function ModalDialog({ open, labelledBy, onClose, className, children }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      // jsdom has no showModal; the dialog is then shown as an open element.
      if (d.showModal) d.showModal();
      else d.setAttribute('open', '');
      const first = d.querySelector<HTMLElement>('[data-autofocus]') ?? d.querySelector<HTMLElement>(FOCUSABLE);
      first?.focus();
    }
    if (!open && d.open) {
      if (d.close) d.close();
      else d.removeAttribute('open');
    }
    if (!open && opener.current) {
      // What the dialog did may have taken its opener away (a rerun started: the plan's buttons go while it runs).
      const back = opener.current.isConnected ? opener.current : document.querySelector<HTMLElement>('.task-title');
      back?.focus();
      opener.current = null;
    }
  }, [open]);

  return (
    <dialog
      ref={dialog}
      className={`dialog${className ? ` ${className}` : ''}`}
      aria-labelledby={labelledBy}
      onCancel={(e) => {
        // Escape: the store decides whether it closes (and so what React renders), not the browser alone.
        e.preventDefault();
        onClose();
      }}
    >
      {open && children}
    </dialog>
  );
}
