/** Cancel as a deliberate act: a dialog that says what stops, takes an optional reason, and confirms. */

import { type FormEvent, useId, useState } from "react";
import { ApiError } from "./api";
import { REASON_MAX, reasonProblem } from "./runActions";
import { Dialog } from "./ui";

/** What the confirm step reports: nothing when it worked, else the refusal (field errors by name). */
export interface Refusal {
  text: string;
  fields?: Record<string, string>;
}

/** Turn a failed request into the refusal the dialog shows (the API's `fields` beside their field). */
export function refusalOf(error: unknown): Refusal {
  if (error instanceof ApiError) {
    const body = error.body as { fields?: unknown } | null;
    const fields = body !== null && typeof body === "object" && typeof body.fields === "object" && body.fields !== null
      ? Object.fromEntries(Object.entries(body.fields as Record<string, unknown>).map(([key, value]) => [key, String(value)]))
      : undefined;
    return fields === undefined ? { text: error.message } : { text: error.message, fields };
  }
  return { text: String(error) };
}

interface Props {
  open: boolean;
  /** "Cancel run 1a2b3c4d?" or "Cancel 3 runs?" */
  title: string;
  /** What cancelling stops, in a sentence. */
  consequence: string;
  /** The confirm button's words ("Cancel the run"). */
  confirm: string;
  onClose: () => void;
  /** Send the cancel; resolve to null when it was accepted, else to why not. */
  onConfirm: (reason: string) => Promise<Refusal | null>;
}

export function CancelDialog({ open, title, consequence, confirm, onClose, onConfirm }: Props) {
  const id = useId();
  const [reason, setReason] = useState("");
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [busy, setBusy] = useState(false);
  const problem = reasonProblem(reason);
  const fieldError = problem || refusal?.fields?.reason || "";
  const close = () => {
    setRefusal(null);
    onClose();
  };
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (problem !== "" || busy) return;
    setBusy(true);
    const answer = await onConfirm(reason.trim());
    setBusy(false);
    setRefusal(answer);
    if (answer === null) {
      setReason("");
      onClose();
    }
  }
  const count = [...reason].length;
  return (
    <Dialog open={open} onClose={close} labelledBy={`${id}-title`} describedBy={`${id}-what`}>
      <form className="modal__form" onSubmit={submit} noValidate>
        <h2 id={`${id}-title`}>{title}</h2>
        <p id={`${id}-what`}>{consequence}</p>
        <label htmlFor={`${id}-reason`}>Reason (optional)</label>
        <textarea
          id={`${id}-reason`}
          rows={3}
          value={reason}
          placeholder="e.g. duplicate invoice"
          onChange={(event) => {
            setReason(event.target.value);
            setRefusal(null); // the server's word was about the text as sent
          }}
          aria-invalid={fieldError !== ""}
          aria-describedby={`${id}-count${fieldError === "" ? "" : ` ${id}-reason-error`}`}
        />
        <p id={`${id}-count`} className={`modal__count ${count > REASON_MAX ? "error" : "muted"}`}>
          {count} of {REASON_MAX} characters. Shown in the run&apos;s trace and beside each step it stops.
        </p>
        {fieldError !== "" && (
          <p id={`${id}-reason-error`} className="error field-error" role="alert">
            {fieldError}
          </p>
        )}
        {refusal !== null && refusal.fields?.reason === undefined && (
          <p className="error" role="alert">
            Refused: {refusal.text}
          </p>
        )}
        <div className="modal__actions">
          <button type="button" className="secondary" onClick={close}>
            Keep running
          </button>
          <button type="submit" className="danger" disabled={busy || problem !== ""} aria-busy={busy}>
            {busy ? "Cancelling…" : confirm}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
