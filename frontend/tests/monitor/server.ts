/**
 * Answers copied from a real run (the server's wording as of main dce4fd3): batch-line-approval with lines a (5), b (50000) and
 * c (60000), cancelled by admin while b and c waited for finance (the run of
 * tests/django/test_monitor__executions.py): its `/executions/`, its `/execution/?id=`
 * of item 1, and its trace.
 */
import type { ServerExecution } from "../../src/monitor/executions";
import { events } from "./traces";

const T = "2026-12-06T02:39:39.228734Z";
const U = "2026-12-06T02:39:39.300742Z";

export const BATCH_CANCELLED_EXECUTIONS: ServerExecution[] = [
  { id: "root:1", parent: null, kind: "root", owner: "", label: "run", status: "cancelled", reason: "Cancelled: cancelled by admin: duplicate batch", first_at: T, last_at: U },
  { id: "root:1:lines:1", parent: "root:1", kind: "item", owner: "lines", label: "1", status: "completed", reason: "Completed", first_at: T, last_at: T },
  { id: "root:1:lines:2", parent: "root:1", kind: "item", owner: "lines", label: "2", status: "cancelled", reason: "Cancelled by admin", first_at: T, last_at: U },
  { id: "root:1:lines:3", parent: "root:1", kind: "item", owner: "lines", label: "3", status: "cancelled", reason: "Cancelled by admin", first_at: T, last_at: U },
];

export const ITEM_1_VIEW = {
  run: "de4cc93e-1eaf-49e8-8e53-d02be693d421",
  execution: "root:1:lines:1",
  status: "cancelled",
  colors: { start: "completed", lines: "cancelled", big: "completed", done: "skipped", review: "skipped", small: "completed", ok: "skipped" },
  reasons: {
    start: "Completed",
    lines: "Cancelled by admin (duplicate batch) while running",
    big: "Completed: chose `false`",
    done: "Skipped: `lines` was cancelled before reaching this",
    review: "Not taken: `big` chose `false`",
    small: "Completed",
    ok: "Not taken: `big` chose `false`",
  },
};

/** One execution as the server would send it, for tests that need many. */
export function execution(id: string, parent: string | null, fields: Partial<ServerExecution> = {}): ServerExecution {
  const parts = id.split(":");
  const label = parts[parts.length - 1]!;
  return { id, parent, kind: "item", owner: "lines", label, status: "running", reason: "running", first_at: T, last_at: T, ...fields };
}

/** The same run's trace (seq and detail as stored; one second between events). */
export const BATCH_CANCELLED_TRACE = events([
  [0, "run.started", "root:1", null, {}],
  [1, "node.completed", "root:1", "start", { outcome: "next" }],
  [2, "item.started", "root:1:lines:1", "lines", { index: 0 }],
  [3, "item.started", "root:1:lines:2", "lines", { index: 1 }],
  [4, "item.started", "root:1:lines:3", "lines", { index: 2 }],
  [5, "node.completed", "root:1:lines:1", "big", { outcome: "false" }],
  [6, "node.completed", "root:1:lines:2", "big", { outcome: "true" }],
  [7, "node.completed", "root:1:lines:3", "big", { outcome: "true" }],
  [8, "node.completed", "root:1:lines:1", "small", { outcome: "next" }],
  [9, "item.finished", "root:1:lines:1", "lines", { index: 0 }],
  [10, "paused", "root:1:lines:2", "review", { reason: "approval", groups: ["finance"] }],
  [11, "paused", "root:1:lines:3", "review", { reason: "approval", groups: ["finance"] }],
  [12, "run.cancelled", "root:1", null, { by: "admin", reason: "duplicate batch" }],
  [13, "frame.cancelled", "root:1", "lines", { reason: "run cancelled by admin" }],
  [14, "frame.cancelled", "root:1:lines:2", "review", { reason: "run cancelled by admin" }],
  [15, "frame.cancelled", "root:1:lines:3", "review", { reason: "run cancelled by admin" }],
  [16, "run.cancelled", "root:1", null, { error: "cancelled by admin: duplicate batch" }],
]);
