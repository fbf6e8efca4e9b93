/** Parts of the run view's node inspector: who decided an approval, and the row's details. */

import { COLOR_CUES, colorClass } from "../graph/colors";
import type { NodeRow, TraceEvent, Vote } from "./types";
import { RelativeTime } from "./ui";
import { voteVerdict, voteWho } from "./votes";

/** Each vote at an approval: the decision with its icon, the person and groups, when, and the comment as text. */
export function Votes({ votes, now }: { votes: readonly Vote[]; now: number }) {
  if (votes.length === 0) return null;
  return (
    <>
      <h3>Decision{votes.length === 1 ? "" : `s (${votes.length})`}</h3>
      <ul className="votes" aria-label="Decisions">
        {votes.map((vote, index) => {
          const verdict = voteVerdict(vote);
          return (
            <li key={`${vote.user}-${vote.at}-${index}`} className="vote">
              <div className="vote__head">
                <span className={`status-pill ${colorClass(verdict.color)}`}>
                  <span aria-hidden="true">{COLOR_CUES[verdict.color].icon}</span> {verdict.text}
                </span>{" "}
                by <strong className="vote__who">{voteWho(vote)}</strong> <RelativeTime iso={vote.at} now={now} />
              </div>
              {vote.comment === "" ? (
                <p className="vote__comment vote__comment--none muted">No comment.</p>
              ) : (
                <blockquote className="vote__comment">{vote.comment}</blockquote>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** Return a row's result as indented JSON (a JSON text is parsed first), or the text itself. */
export function prettyResult(value: unknown): string {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? "null";
}

/**
 * The row's details, folded away: its execution id, attempt and raw result (no longer in
 * the reason) and the time of the node's last trace event.
 */
export function RowDetails({ row, last, now }: { row: NodeRow; last: TraceEvent | undefined; now: number }) {
  return (
    <details className="row-details">
      <summary>Details</summary>
      <dl>
        <dt>Execution</dt>
        <dd>
          <code>{row.execution_id}</code>
        </dd>
        <dt>Attempt</dt>
        <dd>{row.attempt ?? "—"}</dd>
        {row.status_detail !== undefined && (
          <>
            <dt>Detail</dt>
            <dd>
              <code>{row.status_detail}</code>
            </dd>
          </>
        )}
        {last !== undefined && (
          <>
            <dt>Last event</dt>
            <dd>
              {last.event} <RelativeTime iso={last.at} now={now} />
            </dd>
          </>
        )}
      </dl>
      <h3>Result</h3>
      <pre>{prettyResult(row.result)}</pre>
    </details>
  );
}

/** Why the viewer may not decide an open request, as the server words it (approvals API `why_not`). */
export interface ApprovalWhy {
  code: string;
  text: string;
}

/**
 * The server's reason the viewer may not decide a request at this node: for the run's starter,
 * "You started this run, so another finance member must decide" (segregation of duties).
 */
export function WhyNotHere({ why, groups, viewer }: {
  why: ApprovalWhy | null; groups: readonly string[]; viewer: readonly string[];
}) {
  if (why === null) {
    const member = groups.some((group) => viewer.includes(group));
    return <p className="muted">Waiting on {groups.join(", ")}{member ? "." : "; you are in none of these groups."}</p>;
  }
  const starter = why.code === "approval.starter";
  return (
    <p className={starter ? "why-not why-not--starter" : "muted"} data-code={why.code}>
      {starter ? (
        <svg className="icon" viewBox="0 0 16 16" width="1em" height="1em" aria-hidden="true" focusable="false">
          <path d="M8 1l7 13H1zm-.9 4.5v4h1.8v-4zm0 5.2v1.8h1.8v-1.8z" fill="currentColor" fillRule="evenodd" />
        </svg>
      ) : null}
      {why.text}
    </p>
  );
}
