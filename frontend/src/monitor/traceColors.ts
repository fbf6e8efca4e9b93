/**
 * Colors for one execution, from the trace (CONTRACT §4: node rows keep only the newest
 * write, so a past iteration, item or branch is recolored from its trace events).
 */

import type { Color } from "../graph/colors";
import { eventExecution, isWithin } from "./executions";
import type { TraceEvent } from "./types";

export interface ExecutionColors {
  colors: Record<string, Color>;
  reasons: Record<string, string>;
}

/** The color an event leaves its node in, or null for events that say nothing about it. */
function colorAfter(event: TraceEvent, current: Color | undefined): Color | null {
  switch (event.event) {
    case "node.completed":
    case "fork.activated":
    case "gather.waiting":
      return "completed";
    case "node.failed":
      return "failed";
    case "frame.cancelled":
      return current === "completed" || current === "failed" ? current : "cancelled";
    case "paused":
      return "waiting";
    case "resumed":
    case "action.dispatched":
    case "action.started":
    case "action.retry_scheduled":
    case "fork.activated":
    case "branch.started":
    case "iteration.started":
    case "item.started":
    case "subflow.started":
      return "running";
    default:
      return null;
  }
}

function describe(event: TraceEvent, color: Color, where: string): string {
  const detail = event.detail ?? {};
  const extra =
    typeof detail.error === "string" ? `: ${detail.error}`
    : typeof detail.reason === "string" ? `: ${detail.reason}`
    : typeof detail.outcome === "string" ? ` (outcome ${detail.outcome})`
    : "";
  return `${color} in ${where}${extra} — trace event ${event.event} #${event.seq}`;
}

/** How close an event's execution is to the chosen one: 0 the same, 1 inside it, 2 around it. */
function closeness(eventId: string, chosen: string): number | null {
  if (eventId === chosen) return 0;
  if (isWithin(eventId, chosen)) return 1;
  if (isWithin(chosen, eventId)) return 2;
  return null;
}

/**
 * Color every node path in `paths` as it stood in execution `chosen`: by the events of
 * that execution, else of executions inside it, else of the executions around it (the
 * loop or foreach node itself). A node with no such event was not reached there: pending
 * while the execution may still reach it, skipped once it has finished.
 */
export function colorsForExecution(
  events: readonly TraceEvent[],
  paths: readonly string[],
  chosen: string,
  chosenFinished: boolean,
): ExecutionColors {
  const best = new Map<string, { rank: number; color: Color; event: TraceEvent }>();
  for (const event of events) {
    if (event.node === null) continue;
    const rank = closeness(eventExecution(event), chosen);
    if (rank === null) continue;
    const known = best.get(event.node);
    if (known !== undefined && known.rank < rank) continue;
    const color = colorAfter(event, known !== undefined && known.rank === rank ? known.color : undefined);
    if (color !== null) best.set(event.node, { rank, color, event });
  }
  const colors: Record<string, Color> = {};
  const reasons: Record<string, string> = {};
  for (const path of paths) {
    const found = best.get(path);
    if (found === undefined) {
      colors[path] = chosenFinished ? "skipped" : "pending";
      reasons[path] = chosenFinished
        ? `skipped: not reached in ${chosen} (no trace event for this node there)`
        : `pending: not reached yet in ${chosen}`;
    } else {
      colors[path] = found.color;
      reasons[path] = describe(found.event, found.color, eventExecution(found.event));
    }
  }
  return { colors, reasons };
}
