/** The run's timeline: one bar per node execution, nested by execution id (pure). */

import type { Color } from "../graph/colors";
import { compareIds, eventExecution, parseExecutionId } from "./executions";
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
 * Events after which a node's part in an execution is over. A fork is done once it has
 * started its branches, and a branch's arrival at a gather once it is recorded (the merge
 * is the gather's own bar in the outer execution).
 */
const TERMINAL: Readonly<Record<string, Color>> = {
  "node.completed": "completed",
  "fork.activated": "completed",
  "gather.waiting": "completed",
  "node.failed": "failed",
  "frame.cancelled": "cancelled",
};

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
 * Build the bars: a node's bar in one execution spans its first to its last event; a node
 * not yet settled (no completed, failed or cancelled event) stays open until `now` while
 * the run is live, and takes its final color from `finalColors` once the run is over.
 * Bars are ordered by execution id, then start.
 */
export function timeline(
  events: readonly TraceEvent[],
  runLive: boolean,
  now: number,
  finalColors: Readonly<Record<string, Color>> = {},
): Timeline {
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
      if (!(terminal === "cancelled" && (bar.color === "completed" || bar.color === "failed"))) bar.color = terminal;
      bar.open = false;
    } else if (event.event === "paused") {
      bar.color = "waiting";
    } else if (event.event === "resumed") {
      bar.color = "running";
    }
  }
  for (const bar of bars.values()) {
    if (bar.open && runLive) {
      bar.end = Math.max(bar.end, now);
      end = Math.max(end, now);
    } else if (bar.open) {
      // The run is over and no event closed this bar: the node's final color tells how.
      bar.open = false;
      const final = finalColors[bar.node];
      if (bar.color === "running" || bar.color === "waiting") {
        bar.color = final === "completed" || final === "failed" || final === "cancelled" ? final : "cancelled";
      }
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
