/** The run view's execution tree, windowed, and the text helpers it shares with the run view. */

import { useMemo, useState } from "react";
import { reasonPlain } from "../graph/reason";
import { type Execution, type ExecutionTree, executionTitle, groupSummary, type TreeRow, visibleRows } from "./executions";
import { StatusPill, VirtualList } from "./ui";

const TREE_ROW = 28;
/** Groups of up to this many executions start open in the tree. */
const AUTO_OPEN = 20;

interface TreePanelProps {
  tree: ExecutionTree;
  chosen: string | null;
  onChoose: (id: string | null) => void;
  /** False until the server's executions have first arrived. */
  ready?: boolean;
  /** Why the executions could not be loaded, or "". */
  error?: string;
  /** Groups of up to this many executions start open. */
  autoOpen?: number;
}

/** End a message with one full stop ("answered 500." stays, "no execution 'x'" gains one). */
export function sentence(text: string): string {
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}

/** The part of a reason a status pill beside it does not already say: "Cancelled: race…" → "race…", "Completed" → "". */
export function reasonBeside(status: string, reason: string): string {
  const lower = reason.toLowerCase();
  if (lower === status) return "";
  return lower.startsWith(`${status}: `) ? reason.slice(status.length + 2) : reason;
}

/** An execution's tooltip: its id, and its status with the reason the server gives. */
export function executionTooltip(execution: Execution): string {
  return `${execution.id} — ${execution.reason === "" ? execution.status : reasonPlain(execution.reason)}`;
}

/** The execution tree, windowed: only the rows in view are in the DOM. */
export function ExecutionTreePanel({ tree, chosen, onChoose, ready = true, error = "", autoOpen = AUTO_OPEN }: TreePanelProps) {
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set(["root:1"]));
  const rows = useMemo(() => visibleRows(tree, expanded, autoOpen), [tree, expanded, autoOpen]);
  const toggle = (key: string) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  const render = (row: TreeRow) => {
    const indent = { paddingLeft: `${0.4 + row.depth * 0.9}rem` };
    if (row.type === "group") {
      const open = expanded.has(row.key) !== row.group.ids.length <= autoOpen;
      return (
        <button type="button" className="tree-row tree-row--group" style={indent} aria-expanded={open} onClick={() => toggle(row.key)} title={groupSummary(row.group)}>
          <span className="tree-row__toggle" aria-hidden="true">{open ? "▾" : "▸"}</span>
          {groupSummary(row.group)}
        </button>
      );
    }
    const execution = tree.byId.get(row.id)!;
    const open = expanded.has(row.id);
    return (
      <span className="tree-row" style={{ ...indent, cursor: "default" }}>
        {row.expandable ? (
          <button type="button" className="tree-row__toggle link" aria-label={`${open ? "Collapse" : "Expand"} ${executionTitle(execution)}`} aria-expanded={open} onClick={() => toggle(row.id)}>
            {open ? "▾" : "▸"}
          </button>
        ) : (
          <span className="tree-row__toggle" aria-hidden="true">·</span>
        )}
        <button
          type="button"
          className="tree-row"
          aria-current={chosen === row.id}
          onClick={() => onChoose(row.id)}
          title={executionTooltip(execution)}
          data-execution={execution.id}
          data-status={execution.status}
        >
          {executionTitle(execution)} <StatusPill status={execution.status} />
        </button>
      </span>
    );
  };
  return (
    <section className="panel" aria-labelledby="tree-h">
      <h2 id="tree-h">
        Executions
        {chosen !== null && (
          <button type="button" onClick={() => onChoose(null)}>
            Live
          </button>
        )}
      </h2>
      {error !== "" && (
        <p className="error" role="alert">
          {sentence(error)} The tree below may be out of date; reload the page to try again.
        </p>
      )}
      {tree.root === null ? (
        <p className="muted" role="status">
          {ready ? "No executions yet: the tree appears once the run has started." : "Loading the executions…"}
        </p>
      ) : (
        <VirtualList
          items={rows}
          rowHeight={TREE_ROW}
          height={Math.min(320, Math.max(rows.length, 3) * TREE_ROW + 4)}
          label="Execution tree"
          rowKey={(row) => (row.type === "group" ? row.key : row.id)}
          renderRow={render}
        />
      )}
    </section>
  );
}
