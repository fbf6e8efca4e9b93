/** The tokens page's pieces: the new-token form, the secret shown once, the list, the revoke dialog. */

import { type FormEvent, useId, useState } from "react";
import { absoluteTime } from "../monitor/time";
import { Dialog, RelativeTime } from "../monitor/ui";
import {
  type ApiToken, EXPIRY_CHOICES, type ExpiryChoice, type IssuedToken, type NewTokenBody, NAME_MAX,
  curlExample, expiryText, lastUsedText, newTokenBody, revokeConsequence,
} from "./model";

interface CreateProps {
  /** Send the new token; resolve to null when it was made, else to the server's refusal. */
  onCreate: (body: NewTokenBody) => Promise<string | null>;
}

export function CreateForm({ onCreate }: CreateProps) {
  const id = useId();
  const [name, setName] = useState("");
  const [choice, setChoice] = useState<ExpiryChoice>("90");
  const [date, setDate] = useState("");
  const [problem, setProblem] = useState<{ text: string; field: "name" | "date" | "server" } | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    const made = newTokenBody(name, choice, date, Date.now());
    if ("problem" in made) {
      setProblem({ text: made.problem, field: made.field });
      return;
    }
    setBusy(true);
    const refused = await onCreate(made.body);
    setBusy(false);
    setProblem(refused === null ? null : { text: refused, field: "server" });
    if (refused === null) setName("");
  }
  const errorId = `${id}-problem`;
  return (
    <form className="card tokens__create" onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New token</h2>
      <div className="tokens__fields">
        <div>
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} type="text" value={name} maxLength={NAME_MAX} placeholder="e.g. nightly export"
            onChange={(event) => { setName(event.target.value); setProblem(null); }}
            aria-invalid={problem?.field === "name"} aria-describedby={problem?.field === "name" ? errorId : undefined} />
        </div>
        <div>
          <label htmlFor={`${id}-expiry`}>Expires</label>
          <select id={`${id}-expiry`} value={choice} onChange={(event) => { setChoice(event.target.value as ExpiryChoice); setProblem(null); }}>
            {EXPIRY_CHOICES.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
          </select>
        </div>
        {choice === "date" && (
          <div>
            <label htmlFor={`${id}-date`}>Day (UTC)</label>
            <input id={`${id}-date`} type="date" value={date} onChange={(event) => { setDate(event.target.value); setProblem(null); }}
              aria-invalid={problem?.field === "date"} aria-describedby={problem?.field === "date" ? errorId : undefined} />
          </div>
        )}
      </div>
      {problem !== null && <p id={errorId} className="error" role="alert">{problem.text}</p>}
      <button type="submit" disabled={busy} aria-busy={busy}>{busy ? "Making…" : "Make token"}</button>
    </form>
  );
}

interface SecretProps {
  issued: IssuedToken;
  origin: string;
  onDone: () => void;
}

/** The new secret, once: a warning, the value, a copy button and a first call to try. */
export function SecretBox({ issued, origin, onDone }: SecretProps) {
  const id = useId();
  const [copied, setCopied] = useState<"" | "copied" | "failed">("");
  async function copy() {
    try {
      await navigator.clipboard.writeText(issued.token);
      setCopied("copied");
    } catch {
      setCopied("failed");
    }
  }
  return (
    <section className="notice tokens__secret" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Token “{issued.name}” made</h2>
      <p className="tokens__warning" id={`${id}-warning`}>
        <strong>Copy it now: it is shown only this once.</strong> Braid keeps only a hash of it. Anyone
        holding it can call the API as you, so keep it out of code and chat; revoke it if it leaks.
      </p>
      <div className="tokens__value">
        <label className="visually-hidden" htmlFor={`${id}-secret`}>The token</label>
        <input id={`${id}-secret`} type="text" readOnly value={issued.token} aria-describedby={`${id}-warning`}
          onFocus={(event) => event.target.select()} />
        <button type="button" onClick={() => void copy()}>Copy</button>
      </div>
      <p role="status" className="muted">
        {copied === "copied" ? "Copied to the clipboard." : copied === "failed" ? "Could not copy: select the token and copy it yourself." : ""}
      </p>
      <p className="muted">Try it:</p>
      <pre className="tokens__example"><code>{curlExample(origin, issued.token)}</code></pre>
      <button type="button" className="secondary" onClick={onDone}>I have copied it</button>
    </section>
  );
}

interface TableProps {
  tokens: readonly ApiToken[];
  now: number;
  showUser: boolean;
  onRevoke: (token: ApiToken) => void;
}

export function TokenTable({ tokens, now, showUser, onRevoke }: TableProps) {
  if (tokens.length === 0) return <p className="notice">No tokens yet. Make one above for a script.</p>;
  return (
    <div className="tokens__scroll" tabIndex={0} role="region" aria-label="API tokens">
      <table className="tokens__table">
        <caption className="visually-hidden">API tokens</caption>
        <thead>
          <tr>
            <th scope="col">Name</th><th scope="col">Prefix</th>{showUser && <th scope="col">User</th>}
            <th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th>
            <th scope="col"><span className="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((token) => (
            <tr key={token.id} className={token.expired ? "tokens__row--expired" : undefined}>
              <td>{token.name}</td>
              <td><code>{token.prefix}…</code></td>
              {showUser && <td>{token.user}</td>}
              <td><RelativeTime iso={token.created_at} now={now} /></td>
              <td>{token.expires_at === null ? "never" : <time dateTime={token.expires_at} title={absoluteTime(token.expires_at)}>{expiryText(token, now)}</time>}</td>
              <td>{token.last_used_at === null ? lastUsedText(token, now) : <RelativeTime iso={token.last_used_at} now={now} />}</td>
              <td>
                <button type="button" className="danger" onClick={() => onRevoke(token)} aria-label={`Revoke token ${token.name}`}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface RevokeProps {
  token: ApiToken | null;
  caller: string;
  onClose: () => void;
  /** Revoke; resolve to null when done, else to why not. */
  onConfirm: (token: ApiToken) => Promise<string | null>;
}

export function RevokeDialog({ token, caller, onClose, onConfirm }: RevokeProps) {
  const id = useId();
  const [refusal, setRefusal] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const close = () => { setRefusal(null); onClose(); };
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (token === null || busy) return;
    setBusy(true);
    const answer = await onConfirm(token);
    setBusy(false);
    setRefusal(answer);
    if (answer === null) onClose();
  }
  return (
    <Dialog open={token !== null} onClose={close} labelledBy={`${id}-title`} describedBy={`${id}-what`}>
      {token !== null && (
        <form className="modal__form" onSubmit={submit}>
          <h2 id={`${id}-title`}>Revoke “{token.name}”?</h2>
          <p id={`${id}-what`}>{revokeConsequence(token, caller)}</p>
          {refusal !== null && <p className="error" role="alert">Refused: {refusal}</p>}
          <div className="modal__actions">
            <button type="button" className="secondary" onClick={close}>Keep it</button>
            <button type="submit" className="danger" disabled={busy} aria-busy={busy}>{busy ? "Revoking…" : "Revoke token"}</button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
