/** The inspector's "State writes" section: what the node's lineage wrote, live. */

import { useEffect, useRef, useState } from "react";
import { ApiError } from "./api";
import type { NodeRow } from "./types";
import { fetchWrites, type NodeWrites, valueText, WritesFollower } from "./writes";

/** At most about one writes request a second while a busy run changes. */
const REFRESH_GAP_MS = 1000;

/** What the section shows: nothing asked yet, loading, an error, or the writes. */
export type WritesState =
  | { kind: "not-run" }
  | { kind: "loading" }
  | { kind: "error"; message: string }
  | { kind: "ready"; data: NodeWrites };

function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

interface ViewProps {
  state: WritesState;
  /** Selects a writer node in the inspector (and on the canvas). */
  onSelect: (path: string) => void;
  /** The node being inspected: its own writes are not links to itself. */
  node: string;
}

/** The section as markup, for each state (kept apart from fetching, so it renders anywhere). */
export function StateWritesView({ state, onSelect, node }: ViewProps) {
  let body;
  if (state.kind === "not-run") {
    body = <p className="muted">This node has not run yet: no lineage, so no state writes to show.</p>;
  } else if (state.kind === "loading") {
    body = <p className="muted" role="status">Loading the state writes…</p>;
  } else if (state.kind === "error") {
    body = (
      <p className="error" role="alert">
        Could not load the state writes: {state.message}
        {/[.!?]$/.test(state.message) ? "" : "."} They reload when the run next changes.
      </p>
    );
  } else if (state.data.writes.length === 0) {
    body = <p className="muted">No state writes reach this node.</p>;
  } else {
    body = (
      <div className="writes-wrap">
        <table className="writes-table">
          <caption className="visually-hidden">State writes that reach {node}, in trace order</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Value</th>
              <th scope="col">Written by</th>
              <th scope="col">Via</th>
            </tr>
          </thead>
          <tbody>
            {state.data.writes.map((write) => (
              <tr key={`${write.seq}:${write.field}`}>
                <td>
                  <code>{write.field}</code>
                </td>
                <td className="writes-table__value">
                  <code>{valueText(write.value)}</code>
                </td>
                <td title={`${write.execution_id}, trace event #${write.seq}`}>
                  {write.node === node ? (
                    <code>{write.node}</code>
                  ) : (
                    <button type="button" className="link" onClick={() => onSelect(write.node)} aria-label={`Inspect ${write.node}`}>
                      <code>{write.node}</code>
                    </button>
                  )}
                </td>
                <td>{write.via ?? <span className="muted">own path</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }
  return (
    <>
      <h3>State writes</h3>
      {body}
    </>
  );
}

interface Props {
  runId: string;
  node: string;
  /** False while the node has no row: the endpoint only knows nodes that have run. */
  hasRun: boolean;
  /** Changes when the writes may have changed (see `writesVersion`): they are fetched again. */
  version: unknown;
  onSelect: (path: string) => void;
}

/**
 * What the writes of a node depend on: while its row is running or waiting, every change
 * of the run; once it has finished, only its row (the endpoint gives the writes up to its
 * completion, which change only when a newer execution, say a later loop iteration,
 * writes the row).
 */
export function writesVersion(row: NodeRow | undefined, picture: unknown): unknown {
  if (row === undefined || row.status === "running" || row.status === "waiting") return picture;
  return `${row.execution_id}|${row.attempt ?? 1}|${row.status}`;
}

/** The section, fetched for `node` and refreshed when its writes may have changed. */
export function StateWrites({ runId, node, hasRun, version, onSelect }: Props) {
  const [state, setState] = useState<WritesState>({ kind: "loading" });
  const follower = useRef<WritesFollower | null>(null);
  const shownNode = useRef<string | null>(null);

  useEffect(() => {
    const following = new WritesFollower(
      (path) => fetchWrites(runId, path),
      (path, result) => {
        if (path !== shownNode.current) return;
        // Keep the writes on screen when a refresh fails; say so only when there is nothing to keep.
        if ("writes" in result) setState({ kind: "ready", data: result.writes });
        else setState((current) => (current.kind === "ready" ? current : { kind: "error", message: errorMessage(result.error) }));
      },
      REFRESH_GAP_MS,
    );
    follower.current = following;
    return () => following.stop();
  }, [runId]);

  useEffect(() => {
    if (shownNode.current !== node) {
      shownNode.current = node;
      setState(hasRun ? { kind: "loading" } : { kind: "not-run" });
    } else if (hasRun) {
      setState((current) => (current.kind === "not-run" ? { kind: "loading" } : current));
    }
    if (hasRun) follower.current?.refresh(node);
    else follower.current?.refresh(null);
  }, [node, hasRun, version]);

  return <StateWritesView state={hasRun ? state : { kind: "not-run" }} onSelect={onSelect} node={node} />;
}
