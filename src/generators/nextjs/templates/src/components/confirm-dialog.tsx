"use client";

import { Button } from "@/components/ui/button";
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
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  description: string;
  confirmLabel: string;
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
      onClose={onCancel}
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
            <Button variant="outline" autoFocus onClick={onCancel} data-testid="confirm-cancel">
              Cancel
            </Button>
            <Button variant="destructive" onClick={onConfirm} data-testid="confirm-accept">
              {confirmLabel}
            </Button>
          </div>
        </>
      ) : null}
    </dialog>
  );
}

export { ConfirmDialog };
