/** The run's timeline: one bar per node execution, nested by execution id (pure). */

import type { Color } from "../graph/colors";
import { compareIds, type ExecutionStatus, eventExecution, parentId, parseExecutionId } from "./executions";
import type { TraceEvent } from "./types";

export interface Bar {
  key: string;
  node: string;
  executionId: string;
  depth: number;
  start: number;
  end: number;
  color: Color;
  /** True while the bar's node is still in flight: its end is "now". */
  open: boolean;
  /** The trace seq of the bar's first event: orders bars that start at the same instant. */
  firstSeq: number;
}

export interface Timeline {
  bars: Bar[];
  start: number;
  end: number;
}

/**
 * Events after which a node's part in an execution is over, and how the trace records it
 * ended. A fork is done once it has started its branches, and a branch's arrival at a
 * gather once it is recorded (the merge is the gather's own bar in the outer execution).
 */
const TERMINAL: Readonly<Record<string, Color>> = {
  "node.completed": "completed",
  "fork.activated": "completed",
  "gather.waiting": "completed",
  "node.failed": "failed",
  "frame.cancelled": "cancelled",
};

/** What the server says, which the timeline reads instead of guessing. */
export interface ServerStatuses {
  /** An execution's status (engine/core/executions.py); undefined when not known yet. */
  execution(id: string): ExecutionStatus | undefined;
  /** The live color of `node` when its newest row is in `executionId`, else undefined. */
  row(node: string, executionId: string): Color | undefined;
}

/** Return the status of `id`, else of its nearest known ancestor (a new item of a running foreach runs). */
function statusOf(statuses: ServerStatuses, id: string): ExecutionStatus | undefined {
  for (let at: string | null = id; at !== null; at = parentId(at)) {
    const status = statuses.execution(at);
    if (status !== undefined) return status;
  }
  return undefined;
}

function entryOf(bars: Map<string, Bar>, event: TraceEvent, at: number): Bar {
  const executionId = eventExecution(event);
  const key = `${executionId}|${event.node}`;
  let bar = bars.get(key);
  if (bar === undefined) {
    const depth = (parseExecutionId(executionId)?.length ?? 1) - 1;
    bar = { key, node: event.node!, executionId, depth, start: at, end: at, color: "running", open: true, firstSeq: event.seq };
    bars.set(key, bar);
  }
  return bar;
}

/**
 * Build the bars: a node's bar in one execution spans its first to its last event. A bar
 * the trace closed (completed, failed, cancelled) keeps how it closed. A bar it has not
 * closed takes its state from the server: while the server says its execution runs or
 * waits, the bar stays open until `now`, colored by the node's live row when the row is
 * in that execution, else by the execution's status; once the server says the execution
 * ended, the bar ends at its last event, colored by the node's row there, else cancelled
 * (its execution ended before it did: CONTRACT §4). Bars are ordered by execution id, then start.
 */
export function timeline(events: readonly TraceEvent[], now: number, statuses: ServerStatuses): Timeline {
  const bars = new Map<string, Bar>();
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const event of events) {
    const at = Date.parse(event.at);
    if (Number.isNaN(at)) continue;
    start = Math.min(start, at);
    end = Math.max(end, at);
    if (event.node === null || event.node === "") continue;
    const bar = entryOf(bars, event, at);
    bar.end = Math.max(bar.end, at);
    const terminal = TERMINAL[event.event];
    if (terminal !== undefined) {
      // A cancel that reaches a node after it ended does not undo how it ended.
      if (!(terminal === "cancelled" && (bar.color === "completed" || bar.color === "failed"))) bar.color = terminal;
      bar.open = false;
    }
  }
  for (const bar of bars.values()) {
    if (!bar.open) continue;
    const execution = statusOf(statuses, bar.executionId);
    const row = statuses.row(bar.node, bar.executionId);
    if (execution === undefined || execution === "running" || execution === "waiting") {
      bar.color = row === "running" || row === "waiting" ? row : (execution ?? "running");
      bar.end = Math.max(bar.end, now);
      end = Math.max(end, now);
    } else {
      bar.open = false;
      bar.color = row === "completed" || row === "failed" || row === "cancelled" ? row : "cancelled";
    }
  }
  const ordered = [...bars.values()].sort(
    (a, b) => compareIds(a.executionId, b.executionId) || a.start - b.start || a.firstSeq - b.firstSeq,
  );
  return Number.isFinite(start) ? { bars: ordered, start, end: Math.max(end, start) } : { bars: [], start: 0, end: 0 };
}

/** Where a bar sits on a 0–100 % axis, with a minimum visible width. */
export function barGeometry(bar: Bar, line: Timeline, minPercent = 0.8): { left: number; width: number } {
  const span = Math.max(line.end - line.start, 1);
  const left = ((bar.start - line.start) / span) * 100;
  const width = Math.max(((bar.end - bar.start) / span) * 100, minPercent);
  return { left: Math.min(left, 100 - minPercent), width: Math.min(width, 100 - Math.min(left, 100 - minPercent)) };
}
