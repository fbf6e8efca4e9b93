/** The inbox's detail of the active request (decide, delegate, reassign) and the dialog that confirms a decision. */
import { useState, type KeyboardEvent as ReactKeyboardEvent } from "react";
import type { InboxApi } from "./api";
import { type Pending, type Tab, VERB, type Verdict } from "./inboxState";
import { flowName } from "./model";
import { Decisions, Dialog, Due, Icon, InputValues, Outcome, Policy, RunLink, ShownValues, StartedBy, When, WhyNotNote } from "./parts";
import type { ApprovalRequest, InboxConfig } from "./types";

interface DetailProps {
  request: ApprovalRequest; tab: Tab; now: number; config: InboxConfig; api: InboxApi;
  onDecided: (id: number, decision: Verdict) => void;
  onHandedOver: (id: number, message: string) => void; onChanged: () => void;
}

export function Detail({ request, tab, now, config, api, onDecided, onHandedOver, onChanged }: DetailProps) {
  const [comment, setComment] = useState("");
  const [to, setTo] = useState("");
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const decide = async (decision: Verdict) => {
    setBusy(true);
    try {
      await api.decide(request.id, decision, comment);
      onDecided(request.id, decision);
    } catch (error) {
      setMessage(error instanceof Error ? error.message : String(error));
      setBusy(false);
    }
  };
  const handOver = async (how: "delegate" | "reassign") => {
    const person = to.trim();
    try {
      await (how === "delegate" ? api.delegate : api.reassign).call(api, request.id, person, comment);
      if (how === "delegate") {
        onHandedOver(request.id, `Delegated “${request.title}” to ${person}.`);
      } else {
        setMessage(`Reassigned to ${person}.`);
        onChanged();
      }
    } catch (error) {
      setMessage(error instanceof Error ? error.message : String(error));
    }
  };
  return (
    <div className="detail">
      <h2>{request.title}</h2>
      {request.instructions ? <p className="instructions">{request.instructions}</p> : null}
      {tab === "open" ? <WhyNotNote request={request} /> : null}
      <ShownValues request={request} />
      <InputValues request={request} />
      <dl className="facts">
        <div><dt>Started</dt><dd><StartedBy request={request} now={now} flow={false} /></dd></div>
        <div><dt>Flow</dt><dd>{flowName(request)}{request.context.version !== null ? ` v${request.context.version}` : ""} · <RunLink request={request} runUrl={config.runUrl} /></dd></div>
        <div><dt>Step</dt><dd><code>{request.node}</code> <span className="muted">({request.execution_id})</span></dd></div>
        <div><dt>Who</dt><dd><Policy request={request} /></dd></div>
        <div><dt>Asked</dt><dd><When iso={request.created_at} now={now} /></dd></div>
        {request.due_at && tab === "open" ? <div><dt>Due</dt><dd><Due request={request} now={now} /></dd></div> : null}
        {tab === "archive" && request.closed_at ? <div><dt>Closed</dt><dd><When iso={request.closed_at} now={now} /></dd></div> : null}
        {tab === "archive" ? <div><dt>Outcome</dt><dd><Outcome request={request} /></dd></div> : null}
      </dl>
      <Decisions request={request} now={now} />
      {tab === "open" && request.may_decide ? (
        <form className="decide-inline" onSubmit={(e) => e.preventDefault()}>
          <label htmlFor={`comment-${request.id}`}>Comment (optional)</label>
          <textarea id={`comment-${request.id}`} rows={3} maxLength={2000} value={comment}
            onChange={(e) => setComment(e.target.value)} />
          <div className="actions">
            <button type="button" disabled={busy} onClick={() => void decide("approve")}><Icon name="check" /> Approve</button>
            <button type="button" disabled={busy} className="danger" onClick={() => void decide("reject")}><Icon name="cross" /> Reject</button>
          </div>
          <details className="delegate">
            <summary>Delegate to another approver</summary>
            <label htmlFor={`to-${request.id}`}>User name</label>
            <input id={`to-${request.id}`} type="text" value={to} onChange={(e) => setTo(e.target.value)} />
            <button type="button" disabled={!to.trim()} onClick={() => void handOver("delegate")}>Delegate</button>
          </details>
        </form>
      ) : null}
      {tab === "open" && config.admin ? (
        <details className="delegate">
          <summary>Reassign to anyone (admins)</summary>
          <label htmlFor={`reassign-${request.id}`}>User name</label>
          <input id={`reassign-${request.id}`} type="text" value={to} onChange={(e) => setTo(e.target.value)} />
          <button type="button" disabled={!to.trim()} onClick={() => void handOver("reassign")}>Reassign</button>
        </details>
      ) : null}
      {message ? <p role="status" className="message-inline">{message}</p> : null}
    </div>
  );
}

interface DecideDialogProps {
  pending: Pending; titles: ApprovalRequest[];
  onCancel: () => void; onSubmit: (comment: string) => Promise<string>;
}

export function DecideDialog({ pending, titles, onCancel, onSubmit }: DecideDialogProps) {
  const [comment, setComment] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const count = pending.ids.length;
  const first = titles.find((r) => r.id === pending.ids[0]);
  const heading = count === 1 ? `${VERB[pending.decision]} “${first?.title ?? ""}”` : `${VERB[pending.decision]} ${count} requests`;
  const send = async () => {
    setBusy(true);
    setError(await onSubmit(comment));
    setBusy(false);
  };
  const onKey = (event: ReactKeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); if (!busy) void send(); }
  };
  return (
    <Dialog title={heading} onClose={onCancel} labelId="decide-title">
      <form method="dialog" onSubmit={(e) => { e.preventDefault(); void send(); }}>
        <label htmlFor="decide-comment">Comment (optional)</label>
        <textarea id="decide-comment" autoFocus rows={3} maxLength={2000} value={comment}
          onChange={(e) => setComment(e.target.value)} onKeyDown={onKey}
          aria-describedby="decide-hint" />
        <p id="decide-hint" className="muted">Enter sends; Shift+Enter starts a new line; Escape cancels.
          {count > 1 ? " Each request is decided on its own; you will see what was done and what was refused." : ""}</p>
        {error ? <p className="error" role="alert">{error}</p> : null}
        {busy && count > 1 ? <p role="status">Deciding {count}…</p> : null}
        <div className="actions">
          <button type="submit" disabled={busy} className={pending.decision === "reject" ? "danger" : ""}>
            {VERB[pending.decision]}{count > 1 ? ` ${count}` : ""}
          </button>
          <button type="button" className="secondary" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}
