"use client";

import { useModal } from "@/hooks/use-modal";

/**
 * An accessible confirmation (the alertdialog pattern on a native modal <dialog>): focus starts on
 * Cancel, Tab stays inside, Escape cancels, and focus returns to the button that opened it.
 */
function ConfirmDialog({
  open,
  title,
  description,
  confirmLabel,
  cancelClass,
  confirmClass,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  description: string;
  confirmLabel: string;
  cancelClass: string;
  confirmClass: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { ref, onKeyDown } = useModal(open);
  return (
    <dialog
      ref={ref}
      role="alertdialog"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-text"
      data-testid="confirm-dialog"
      onKeyDown={onKeyDown}
      // Escape fires `cancel` at once and `close` a task later, which the browser may deliver after
      // a key pressed meanwhile: cancel at once, and let a late `close` not shut a dialog that has
      // been opened again since.
      onCancel={onCancel}
      onClose={(e) => {
        if (!e.currentTarget.open) onCancel();
      }}
      className="bg-background text-foreground m-auto w-[min(28rem,calc(100vw-2rem))] rounded-xl border p-6 shadow-lg backdrop:bg-black/50"
    >
      {open ? (
        <>
          <h2 id="confirm-title" className="text-lg font-semibold">
            {title}
          </h2>
          <p id="confirm-text" className="text-muted-foreground mt-2 text-sm">
            {description}
          </p>
          <div className="mt-6 flex justify-end gap-2">
            {/* biome-ignore lint/a11y/noAutofocus: the alertdialog pattern starts on the safe choice */}
            <button type="button" className={cancelClass} autoFocus onClick={onCancel} data-testid="confirm-cancel">
              Cancel
            </button>
            <button type="button" className={confirmClass} onClick={onConfirm} data-testid="confirm-accept">
              {confirmLabel}
            </button>
          </div>
        </>
      ) : null}
    </dialog>
  );
}

export { ConfirmDialog };
