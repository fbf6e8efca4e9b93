/** The run view's admin actions: Cancel (confirmed, with an optional reason) and Retry, each disabled with why where it does not apply. */

import { useState } from "react";
import { ApiError, postJson } from "./api";
import { CancelDialog, type Refusal, refusalOf } from "./CancelDialog";
import { cancelBlocked, retryBlocked } from "./runActions";

type Note = { ok: boolean; text: string };

/** A button that does not apply here: still focusable, so its tooltip and reason can be read. */
function ActionButton({ label, blocked, onClick, className, noteId }: {
  label: string;
  blocked: string;
  onClick: () => void;
  className?: string;
  noteId: string;
}) {
  return (
    <button
      type="button"
      className={className}
      aria-disabled={blocked !== ""}
      title={blocked === "" ? undefined : blocked}
      aria-describedby={blocked === "" ? undefined : noteId}
      onClick={() => {
        if (blocked === "") onClick();
      }}
    >
      {label}
    </button>
  );
}

/** Cancel (confirmed in a dialog, with an optional reason) and Retry; each disabled, with why, where it does not apply. */
export function AdminActions({ runId, status }: { runId: string; status: string }) {
  const [confirming, setConfirming] = useState(false);
  const [note, setNote] = useState<Note | null>(null);
  const [retrying, setRetrying] = useState(false);
  const cancelWhy = cancelBlocked(status);
  const retryWhy = retrying ? "A retry is being sent." : retryBlocked(status);
  async function cancel(reason: string): Promise<Refusal | null> {
    try {
      await postJson(`/api/runs/${runId}/cancel/`, { reason });
      setNote({ ok: true, text: reason === "" ? "Cancel requested." : `Cancel requested: ${reason}` });
      return null;
    } catch (error) {
      return refusalOf(error);
    }
  }
  async function retry() {
    setRetrying(true);
    try {
      await postJson(`/api/runs/${runId}/retry/`, {});
      setNote({ ok: true, text: "Retry started: the failed step runs again." });
    } catch (error) {
      setNote({ ok: false, text: `Retry refused: ${error instanceof ApiError ? error.message : String(error)}` });
    } finally {
      setRetrying(false);
    }
  }
  const why = [cancelWhy, retryWhy].filter((text) => text !== "");
  return (
    <section className="panel" aria-labelledby="admin-actions-h">
      <h2 id="admin-actions-h">Admin actions</h2>
      <div className="admin-actions">
        <ActionButton label="Cancel run…" className="danger" blocked={cancelWhy} noteId="admin-actions-why" onClick={() => setConfirming(true)} />
        <ActionButton label="Retry" className="secondary" blocked={retryWhy} noteId="admin-actions-why" onClick={() => void retry()} />
      </div>
      {why.length > 0 && (
        <p id="admin-actions-why" className="muted admin-actions__why">
          {why.join(" ")}
        </p>
      )}
      {note !== null && (
        <p className={note.ok ? "muted" : "error"} role="status">
          {note.text}
        </p>
      )}
      <CancelDialog
        open={confirming}
        title={`Cancel run ${runId.slice(0, 8)}?`}
        consequence="Every step still running or waiting stops, and its open approval requests close. This cannot be undone."
        confirm="Cancel the run"
        onClose={() => setConfirming(false)}
        onConfirm={cancel}
      />
    </section>
  );
}
