/** The editor's smaller parts: banners, the Problems list, version history, shortcuts, the connection tip. */

import { useConnection, useReactFlow } from "@xyflow/react";
import { useEffect, useRef } from "react";
import { type Change, changeWhere, type GraphDiff, shownValue } from "../designer/diff";
import type { QuickFix } from "../designer/quickfix";
import { absoluteTime, type Problem, relativeTime, type Report, type VersionRecord } from "./api";

export function describeDiff(diff: GraphDiff): string {
  const parts: string[] = [];
  const list = (ids: string[]) => ids.join(", ");
  if (diff.nodes.added.length) parts.push(`adds ${list(diff.nodes.added)}`);
  if (diff.nodes.removed.length) parts.push(`lacks ${list(diff.nodes.removed)}`);
  if (diff.nodes.changed.length) parts.push(`changes ${list(diff.nodes.changed)}`);
  if (diff.edges.added.length) parts.push(`${diff.edges.added.length} edge(s) more`);
  if (diff.edges.removed.length) parts.push(`${diff.edges.removed.length} edge(s) fewer`);
  if (diff.members.length) parts.push(`different ${diff.members.join(", ")}`);
  return parts.join("; ");
}

/** While a connection is dragged over a handle or node it cannot take, say why beside the pointer. */
export function ConnectionTip({ check }: { check: (c: { source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null }) => { ok: boolean; reason?: string } }) {
  const connection = useConnection();
  const flow = useReactFlow();
  if (!connection.inProgress || connection.toNode === null) return null;
  const from = connection.fromHandle;
  const to = connection.toHandle;
  const fromTarget = from.type === "target";
  const attempt = fromTarget
    ? { source: connection.toNode.id, sourceHandle: to?.id ?? null, target: connection.fromNode.id, targetHandle: from.id ?? null }
    : { source: connection.fromNode.id, sourceHandle: from.id ?? null, target: connection.toNode.id, targetHandle: to?.id ?? null };
  const result = check(attempt);
  if (result.ok) return null;
  const at = flow.flowToScreenPosition(connection.to);
  return (
    <div className="braid-connection-tip" role="tooltip" style={{ left: at.x + 14, top: at.y + 14 }}>
      <span aria-hidden="true">✖ </span>
      {result.reason}
    </div>
  );
}

export function VersionsPanel({ versions, viewing, onOpen, onRestore, onClose }: { versions: VersionRecord[] | null; viewing: VersionRecord | null; onOpen: (v: VersionRecord) => void; onRestore: ((v: VersionRecord) => void) | undefined; onClose: () => void }) {
  return (
    <aside className="braid-inspector" aria-label="Version history">
      <div className="braid-inspector__body">
        <h2>Version history</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
        {versions === null ? (
          <p>Loading…</p>
        ) : versions.length === 0 ? (
          <p className="braid-empty">No versions yet. Publish the draft to make version 1.</p>
        ) : (
          <ol className="braid-versions">
            {versions.map((version) => (
              <li key={version.number} aria-current={viewing?.number === version.number ? "true" : undefined}>
                <strong>v{version.number}</strong> by {version.published_by},{" "}
                <span title={absoluteTime(version.published_at)}>{relativeTime(version.published_at)}</span>
                <div>
                  <button type="button" onClick={() => onOpen(version)}>
                    Open v{version.number}
                  </button>{" "}
                  {onRestore && (
                    <button type="button" onClick={() => onRestore(version)}>
                      Restore v{version.number}
                    </button>
                  )}
                </div>
              </li>
            ))}
          </ol>
        )}
      </div>
    </aside>
  );
}

const SHORTCUTS: [string, string][] = [
  ["/", "Quick-add a node (after the selected one, connected)"],
  ["Ctrl+Z", "Undo"],
  ["Ctrl+Shift+Z or Ctrl+Y", "Redo"],
  ["Delete or Backspace", "Delete the selection"],
  ["Ctrl+C / Ctrl+V", "Copy / paste nodes (also across flows)"],
  ["Ctrl+D", "Duplicate the selection"],
  ["Ctrl+A", "Select every node"],
  ["Ctrl+S", "Save now"],
  ["Shift+L", "Auto-layout, branches and slots in declared order"],
  ["Shift+drag", "Select an area"],
  ["Ctrl+click", "Add to the selection"],
  ["Tab / Enter", "Move between nodes / select the focused node"],
  ["Escape", "Close a panel, or clear the selection"],
  ["?", "Show this list"],
];

export function Shortcuts({ onClose }: { onClose: () => void }) {
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => close.current?.focus(), []);
  return (
    <div className="braid-dialog" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts">
      <h2>Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([keys, what]) => (
          <div key={keys}>
            <dt>
              <kbd>{keys}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <button type="button" ref={close} onClick={onClose}>
        Close
      </button>
    </div>
  );
}

export function ConflictBanner({ revision, updatedAt, onTakeTheirs, onKeepMine }: { revision: number; updatedAt: string; onTakeTheirs: () => void; onKeepMine: () => void }) {
  return (
    <div className="braid-banner braid-banner--error" role="alertdialog" aria-label="Save conflict">
      <strong>This draft was saved elsewhere</strong> (another tab or person, revision {revision},{" "}
      <span title={absoluteTime(updatedAt)}>{relativeTime(updatedAt)}</span>). Your changes are not saved.{" "}
      <button type="button" onClick={onTakeTheirs}>
        Load the saved draft
      </button>{" "}
      (undo brings yours back){" "}
      <button type="button" onClick={onKeepMine}>
        Keep mine
      </button>{" "}
      (the other draft is kept in the flow's draft history)
    </div>
  );
}

/** One changed value: where, the version's value, and the draft's. */
function ChangeItem({ change, version }: { change: Change; version: number }) {
  const old = shownValue(change.after);
  const now = shownValue(change.before);
  return (
    <li className="braid-change">
      <span className="braid-change__where">{changeWhere(change)}</span>{" "}
      <span className="braid-change__values">
        <span className="braid-change__old">
          v{version}: <code title={old.endsWith("…") ? JSON.stringify(change.after) : undefined}>{old}</code>
        </span>{" "}
        <span aria-hidden="true">→</span>{" "}
        <span className="braid-change__new">
          draft: <code title={now.endsWith("…") ? JSON.stringify(change.before) : undefined}>{now}</code>
        </span>
      </span>
    </li>
  );
}

export function VersionBanner({ version, diff, onRestore, onBack }: { version: VersionRecord; diff: GraphDiff; onRestore: (() => void) | undefined; onBack: () => void }) {
  return (
    <div className="braid-banner braid-version" role="region" aria-label="Viewing a version">
      <strong>Viewing version {version.number}</strong> (read-only), published by {version.published_by}{" "}
      <span title={absoluteTime(version.published_at)}>{relativeTime(version.published_at)}</span>.{" "}
      {diff.same ? "Same as the draft (layout aside)." : `Against the draft: ${describeDiff(diff)}.`}{" "}
      {onRestore && (
        <button type="button" onClick={onRestore}>
          Restore into the draft
        </button>
      )}{" "}
      <button type="button" onClick={onBack}>
        Back to the draft
      </button>
      {diff.changes.length > 0 && (
        <details className="braid-changes" open>
          <summary>
            {diff.changes.length === 1 ? "1 changed value" : `${diff.changes.length} changed values`}, v{version.number} → draft
          </summary>
          <ul aria-label={`Changed values, version ${version.number} to the draft`}>
            {diff.changes.map((change, index) => (
              <ChangeItem key={index} change={change} version={version.number} />
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

function countsText(report: Report | null, checking: boolean): string {
  if (checking) return "checking…";
  if (report === null) return "";
  if (report.ok && report.warnings.length === 0) return "none: the flow is valid";
  return `${report.errors.length} error(s), ${report.warnings.length} warning(s)`;
}

function where(problem: Problem): string {
  if (problem.node !== null) return problem.node;
  return problem.edge_index !== null ? `edge ${problem.edge ?? problem.edge_index}` : "flow";
}

/** A quick fix's button: its label with the field name as code. */
function FixButton({ fix, onFix }: { fix: QuickFix | null; onFix: ((fix: QuickFix) => void) | undefined }) {
  if (fix === null || onFix === undefined) return null;
  return (
    <button type="button" className="braid-problem__fix" onClick={() => onFix(fix)}>
      Declare <code>{fix.field}</code> ({fix.reducer})
    </button>
  );
}

/** Errors and warnings of the draft; a click focuses the element on the canvas. */
export function ProblemsPanel(props: {
  report: Report | null;
  checking: boolean;
  onFocus: (problem: Problem) => void;
  /** The one obvious fix of a problem, if it has one (see designer/quickfix.ts). */
  fixFor?: (problem: Problem) => QuickFix | null;
  onFix?: (fix: QuickFix) => void;
}) {
  const { report, checking, onFocus, fixFor, onFix } = props;
  const problems = report === null ? [] : [...report.errors, ...report.warnings];
  return (
    <section className="braid-problems" aria-label="Problems">
      <h2>
        Problems <span className="braid-problems__counts">{countsText(report, checking)}</span>
      </h2>
      {problems.length > 0 && (
        <ul>
          {problems.map((problem, index) => (
            <li key={index}>
              <button type="button" className={`braid-problem braid-problem--${problem.severity}`} onClick={() => onFocus(problem)}>
                <span aria-hidden="true">{problem.severity === "error" ? "✖" : "⚠"}</span> <span className="braid-problem__where">{where(problem)}</span> {problem.message}
              </button>
              <FixButton fix={fixFor?.(problem) ?? null} onFix={onFix} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
