/** Small pieces of the inbox page: times, deadlines, shown values, outcomes, decisions. */
import { useEffect, useRef, type ReactNode } from "react";
import {
  absolute, decisionText, dueText, duration, outcomeOf, policyText, relative, valueText,
} from "./model";
import type { ApprovalRequest } from "./types";

type IconName = "pause" | "clock" | "alert" | "check" | "cross" | "cancelled";

const PATHS: Record<IconName, string> = {
  pause: "M5 3h3v10H5zM10 3h3v10h-3z",
  clock: "M8 1.5a6.5 6.5 0 1 0 0 13a6.5 6.5 0 0 0 0-13zm0 1.6a4.9 4.9 0 1 1 0 9.8a4.9 4.9 0 0 1 0-9.8zM7.2 4.5v4.2l3.2 1.9l.8-1.3l-2.4-1.4V4.5z",
  alert: "M8 1l7 13H1zm-.9 4.5v4h1.8v-4zm0 5.2v1.8h1.8v-1.8z",
  check: "M6.2 11.6L2.6 8l1.3-1.3l2.3 2.3l5.9-5.9l1.3 1.3z",
  cross: "M3.5 4.8l1.3-1.3L8 6.7l3.2-3.2l1.3 1.3L9.3 8l3.2 3.2l-1.3 1.3L8 9.3l-3.2 3.2l-1.3-1.3L6.7 8z",
  cancelled: "M8 1.5a6.5 6.5 0 1 0 0 13a6.5 6.5 0 0 0 0-13zM3.1 8a4.9 4.9 0 0 1 7.8-3.9l-6.8 6.8A4.9 4.9 0 0 1 3.1 8zm1.9 3.9l6.8-6.8a4.9 4.9 0 0 1-6.8 6.8z",
};

/** A small icon beside words (decorative: the words carry the meaning). */
export function Icon({ name, className = "" }: { name: IconName; className?: string }) {
  return (
    <svg className={`icon ${className}`} viewBox="0 0 16 16" width="1em" height="1em" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} fill="currentColor" fillRule="evenodd" />
    </svg>
  );
}

/** A relative time with the absolute time in a tooltip (and for machines in dateTime). */
export function When({ iso, now }: { iso: string; now: number }) {
  return (
    <time dateTime={iso} title={absolute(iso)}>
      {relative(iso, now)}
    </time>
  );
}

/** How long a request has waited ("waiting 3 min"), its start time in a tooltip. */
export function Waiting({ iso, now }: { iso: string; now: number }) {
  return (
    <time dateTime={iso} title={`Asked ${absolute(iso)}`}>
      waiting {duration((now - Date.parse(iso)) / 1000)}
    </time>
  );
}

/** "due in 2 hours" or an overdue warning (icon and words, never color alone). */
export function Due({ request, now }: { request: ApprovalRequest; now: number }) {
  const text = dueText(request, now);
  if (!text || request.due_at === null) return null;
  const overdue = text.startsWith("overdue");
  return (
    <span className={overdue ? "due due--overdue" : "due"} title={`Due ${absolute(request.due_at)}`}>
      <Icon name={overdue ? "alert" : "clock"} /> {text}
    </span>
  );
}

/** The state values the node chose to show approvers. */
export function ShownValues({ request }: { request: ApprovalRequest }) {
  if (request.shown.length === 0) return null;
  return (
    <dl className="shown">
      {request.shown.map((item) => (
        <div key={item.field}>
          <dt>{item.field}</dt>
          <dd>{valueText(item.value)}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Who started the run, when, and which flow version: "Started by analyst 3 min ago · Invoice sign-off v2"
 * (without the flow: "analyst 3 min ago", under a "Started" label). */
export function StartedBy({ request, now, flow = true }: { request: ApprovalRequest; now: number; flow?: boolean }) {
  const { context } = request;
  return (
    <span className="started">
      {flow ? "Started by " : ""}<strong>{context.started_by ?? "the command line"}</strong>{" "}
      <When iso={context.started_at} now={now} />
      {flow ? ` · ${context.flow_name}${context.version !== null ? ` v${context.version}` : ""}` : ""}
    </span>
  );
}

/** The run's input in a few short lines, when the node chose nothing to show. */
export function InputValues({ request }: { request: ApprovalRequest }) {
  const fields = request.context.input;
  if (fields === null || fields.length === 0) return null;
  return (
    <dl className="shown shown--input" aria-label="Run input">
      {fields.map((item) => (
        <div key={item.field}>
          <dt>{item.field}</dt>
          <dd>{item.text}</dd>
        </div>
      ))}
      {request.context.input_more > 0 ? (
        <div><dd className="muted">… {request.context.input_more} more field{request.context.input_more === 1 ? "" : "s"}</dd></div>
      ) : null}
    </dl>
  );
}

/** Why the caller may not decide a request they see (the server's sentence), with an icon. */
export function WhyNotNote({ request }: { request: ApprovalRequest }) {
  if (request.why_not === null) return null;
  const starter = request.why_not.code === "approval.starter";
  return (
    <p className={starter ? "why-not why-not--starter" : "why-not muted"} data-code={request.why_not.code}>
      {starter ? <><Icon name="alert" />{" "}</> : null}{request.why_not.text}
    </p>
  );
}

/** A closed request's outcome with its icon. */
export function Outcome({ request }: { request: ApprovalRequest }) {
  const { kind, text } = outcomeOf(request);
  const icon = ({ approved: "check", rejected: "cross", cancelled: "cancelled" } as const)[kind];
  return (
    <span className={`outcome outcome--${kind}`}>
      <Icon name={icon} /> <span className="outcome-text">{text}</span>
    </span>
  );
}

/** Who decided what and when. */
export function Decisions({ request, now }: { request: ApprovalRequest; now: number }) {
  if (request.decisions.length === 0 && request.delegations.length === 0 && !request.assignee) {
    return null;
  }
  return (
    <ul className="history" aria-label="Decisions and hand-overs">
      {request.decisions.map((entry) => (
        <li key={`${entry.user}-${entry.at}`}>
          {decisionText(entry)} · <When iso={entry.at} now={now} />
        </li>
      ))}
      {request.delegations.map((d) => (
        <li key={`${d.from}-${d.to}`}>
          {d.from} delegated to {d.to}
        </li>
      ))}
      {request.assignee ? <li>Reassigned to {request.assignee}</li> : null}
    </ul>
  );
}

/** The run the request belongs to, linked to the live run view. */
export function RunLink({ request, runUrl }: { request: ApprovalRequest; runUrl: string }) {
  const short = request.run.slice(0, 8);
  return (
    <a href={runUrl.replace("{id}", request.run)} aria-label={`Run ${short}, open the run view`}>
      run {short}
    </a>
  );
}

export function Policy({ request }: { request: ApprovalRequest }) {
  return (
    <span>
      {request.groups.join(", ")} · needs {policyText(request.policy)}
    </span>
  );
}

/** A modal dialog (native <dialog>): Escape and the close button call onClose. */
export function Dialog({ title, onClose, children, labelId }: {
  title: string; onClose: () => void; children: ReactNode; labelId: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} className="inbox-dialog" aria-labelledby={labelId}
      onCancel={(event) => { event.preventDefault(); onClose(); }}>
      <h2 id={labelId}>{title}</h2>
      {children}
    </dialog>
  );
}

export const SHORTCUTS: [string, string][] = [
  ["j / ↓", "next request"],
  ["k / ↑", "previous request"],
  ["a", "approve the request (or the selected ones), with a comment"],
  ["r", "reject the request (or the selected ones), with a comment"],
  ["x", "select or unselect the request for a bulk decision"],
  ["/", "search"],
  ["Enter", "in a comment: send the decision (Shift+Enter: new line)"],
  ["Escape", "close a dialog, or clear the selection"],
  ["?", "this list"],
];

export function Shortcuts({ onClose }: { onClose: () => void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose} labelId="shortcuts-title">
      <table className="shortcuts">
        <tbody>
          {SHORTCUTS.map(([key, what]) => (
            <tr key={key}>
              <th scope="row"><kbd>{key}</kbd></th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" onClick={onClose}>Close</button>
    </Dialog>
  );
}
