/** Trace events copied from real demo runs (`braid run … --json`, then the run's TraceEvent rows). */
import type { TraceEvent } from "../../src/monitor/types";

function at(second: number): string {
  return new Date(Date.parse("2026-12-04T05:00:00Z") + second * 1000).toISOString();
}

export type Raw = [number, string, string, string | null, Record<string, unknown>];

/** Trace events from rows of [seq, event, execution id, node, detail], one second apart. */
export function events(raw: Raw[]): TraceEvent[] {
  return raw.map(([seq, event, execution_id, node, detail]) => ({ seq, event, execution_id, node, at: at(seq), detail }));
}

/** batch-line-approval with three lines: line 2 (20000) waits for finance. */
export const FOREACH_WAITING = events([
  [0, "run.started", "root:1", null, {}],
  [1, "node.completed", "root:1", "start", { outcome: "next" }],
  [2, "item.started", "root:1:lines:1", "lines", { index: 0 }],
  [3, "item.started", "root:1:lines:2", "lines", { index: 1 }],
  [4, "item.started", "root:1:lines:3", "lines", { index: 2 }],
  [5, "node.completed", "root:1:lines:1", "big", { outcome: "false" }],
  [6, "node.completed", "root:1:lines:2", "big", { outcome: "true" }],
  [7, "node.completed", "root:1:lines:3", "big", { outcome: "false" }],
  [8, "node.completed", "root:1:lines:1", "small", { outcome: "next" }],
  [9, "item.finished", "root:1:lines:1", "lines", { index: 0 }],
  [10, "paused", "root:1:lines:2", "review", { reason: "approval", groups: ["finance"] }],
  [11, "node.completed", "root:1:lines:3", "small", { outcome: "next" }],
  [12, "item.finished", "root:1:lines:3", "lines", { index: 2 }],
]);

export const BATCH_NODES = ["start", "lines", "big", "review", "ok", "small", "done"];

/** approval-or-timeout: the approval fails; the race fails and its timer branch is cancelled. */
export const RACE_FAILED = events([
  [0, "run.started", "root:1", null, {}],
  [1, "node.completed", "root:1", "start", { outcome: "next" }],
  [2, "branch.started", "root:1:deadline.decision:1", "deadline", { branch: "decision" }],
  [3, "branch.started", "root:1:deadline.timer:1", "deadline", { branch: "timer" }],
  [4, "paused", "root:1:deadline.timer:1", "timer", { reason: "timer" }],
  [5, "node.failed", "root:1:deadline.decision:1", "approve", { error: "title: 'item'" }],
  [6, "node.failed", "root:1", "deadline", { error: "title: 'item'" }],
  [7, "frame.cancelled", "root:1:deadline.timer:1", "timer", { reason: "title: 'item'" }],
  [8, "run.failed", "root:1", null, { error: "title: 'item'" }],
]);

/** staged-gathers, first stage: a fork of a, b, c; a and b meet at gather ab. */
export const FORK_GATHER = events([
  [0, "run.started", "root:1", null, {}],
  [1, "node.completed", "root:1", "start", { outcome: "next" }],
  [2, "fork.activated", "root:1", "split", { branches: ["a", "b", "c"] }],
  [3, "branch.started", "root:1:split.a:1", "split", { branch: "a" }],
  [4, "branch.started", "root:1:split.b:1", "split", { branch: "b" }],
  [5, "branch.started", "root:1:split.c:1", "split", { branch: "c" }],
  [6, "node.completed", "root:1:split.a:1", "a", { outcome: "next" }],
  [7, "gather.waiting", "root:1:split.a:1", "ab", { slot: "a", context: "root:1" }],
  [8, "node.completed", "root:1:split.b:1", "b", { outcome: "next" }],
  [9, "gather.waiting", "root:1:split.b:1", "ab", { slot: "b", context: "root:1" }],
  [10, "gather.merged", "root:1", "ab", { inputs: [["a", "root:1:split.a:1"], ["b", "root:1:split.b:1"]], order: ["a", "b"] }],
  [11, "node.completed", "root:1", "ab", { outcome: "next" }],
  [12, "action.dispatched", "root:1:split.c:1", "c", { action: "noop", attempt: 1 }],
]);
