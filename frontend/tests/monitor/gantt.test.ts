import { expect, test } from "vitest";
import type { Color } from "../../src/graph/colors";
import type { ExecutionStatus } from "../../src/monitor/executions";
import { barGeometry, type ServerStatuses, timeline } from "../../src/monitor/gantt";
import { BATCH_CANCELLED_TRACE } from "./server";
import { FOREACH_WAITING, FORK_GATHER, RACE_FAILED } from "./traces";

const T0 = Date.parse("2026-12-04T05:00:00Z");

/** What the server says: executions' statuses by id, and each node's live row (execution and color). */
function server(executions: Record<string, ExecutionStatus>, rows: Record<string, [string, Color]> = {}): ServerStatuses {
  return {
    execution: (id) => executions[id],
    row: (node, executionId) => (rows[node]?.[0] === executionId ? rows[node]![1] : undefined),
  };
}

const FOREACH_WAITING_SERVER = server(
  { "root:1": "waiting", "root:1:lines:1": "completed", "root:1:lines:2": "waiting", "root:1:lines:3": "completed" },
  { start: ["root:1", "completed"], lines: ["root:1", "running"], review: ["root:1:lines:2", "waiting"] },
);

test("one bar per node execution, nested by execution id; a waiting node stays open until now", () => {
  const now = T0 + 20_000;
  const line = timeline(FOREACH_WAITING, now, FOREACH_WAITING_SERVER);
  expect(line.bars.map((bar) => [bar.executionId, bar.node, bar.depth, bar.color, bar.open])).toEqual([
    ["root:1", "start", 0, "completed", false],
    ["root:1", "lines", 0, "running", true],
    ["root:1:lines:1", "big", 1, "completed", false],
    ["root:1:lines:1", "small", 1, "completed", false],
    ["root:1:lines:2", "big", 1, "completed", false],
    ["root:1:lines:2", "review", 1, "waiting", true],
    ["root:1:lines:3", "big", 1, "completed", false],
    ["root:1:lines:3", "small", 1, "completed", false],
  ]);
  const lines = line.bars.find((bar) => bar.node === "lines")!;
  expect([lines.start - T0, lines.end - T0]).toEqual([2_000, 20_000]);
  const review = line.bars.find((bar) => bar.node === "review")!;
  expect([review.start - T0, review.end - T0]).toEqual([10_000, 20_000]);
  expect([line.start - T0, line.end - T0]).toEqual([0, 20_000]);
  expect(barGeometry(review, line)).toEqual({ left: 50, width: 50 });
});

test("an open bar whose row is elsewhere takes its execution's status from the server", () => {
  // Items 2 and 3 both wait at review; the row keeps item 3's, the server says item 2 waits.
  const events = BATCH_CANCELLED_TRACE.filter((event) => event.seq <= 11);
  const line = timeline(events, T0 + 30_000, server(
    { "root:1": "waiting", "root:1:lines:1": "completed", "root:1:lines:2": "waiting", "root:1:lines:3": "waiting" },
    { lines: ["root:1", "running"], review: ["root:1:lines:3", "waiting"] },
  ));
  const review = line.bars.filter((bar) => bar.node === "review").map((bar) => [bar.executionId, bar.color, bar.open, bar.end - T0]);
  expect(review).toEqual([
    ["root:1:lines:2", "waiting", true, 30_000],
    ["root:1:lines:3", "waiting", true, 30_000],
  ]);
});

test("a bar in an execution the server says ended stops at its last event, cut short, while the run goes on", () => {
  // The run is still live, but the server says item 2 was cancelled (no event closed its review).
  const events = BATCH_CANCELLED_TRACE.filter((event) => event.seq <= 11);
  const line = timeline(events, T0 + 30_000, server(
    { "root:1": "waiting", "root:1:lines:1": "completed", "root:1:lines:2": "cancelled", "root:1:lines:3": "waiting" },
    { lines: ["root:1", "running"], review: ["root:1:lines:3", "waiting"] },
  ));
  const review = line.bars.filter((bar) => bar.node === "review").map((bar) => [bar.executionId, bar.color, bar.open, bar.end - T0]);
  expect(review).toEqual([
    ["root:1:lines:2", "cancelled", false, 10_000],
    ["root:1:lines:3", "waiting", true, 30_000],
  ]);
});

test("in an ended execution a bar takes the color of its row there: a failure stays failed", () => {
  const events = FORK_GATHER.filter((event) => event.seq <= 12);
  const line = timeline(events, T0 + 99_000, server(
    { "root:1": "failed", "root:1:split.a:1": "completed", "root:1:split.b:1": "completed", "root:1:split.c:1": "failed" },
    { c: ["root:1:split.c:1", "failed"] },
  ));
  expect(line.bars.find((bar) => bar.node === "c")).toMatchObject({ color: "failed", open: false });
  expect(line.end - T0).toBe(12_000);
});

test("a new execution the server has not listed yet follows its nearest listed ancestor", () => {
  const line = timeline(FORK_GATHER, T0 + 15_000, server({ "root:1": "running" }));
  expect(line.bars.find((bar) => bar.node === "c")).toMatchObject({ executionId: "root:1:split.c:1", color: "running", open: true });
  expect(line.end - T0).toBe(15_000);
});

test("the cancelled batch: nothing stays open, what completed stays completed, the rest is cancelled", () => {
  const line = timeline(BATCH_CANCELLED_TRACE, T0 + 99_000, server(
    { "root:1": "cancelled", "root:1:lines:1": "completed", "root:1:lines:2": "cancelled", "root:1:lines:3": "cancelled" },
    { lines: ["root:1", "cancelled"], review: ["root:1:lines:3", "cancelled"] },
  ));
  expect(line.bars.map((bar) => [bar.executionId, bar.node, bar.color, bar.open])).toEqual([
    ["root:1", "start", "completed", false],
    ["root:1", "lines", "cancelled", false],
    ["root:1:lines:1", "big", "completed", false],
    ["root:1:lines:1", "small", "completed", false],
    ["root:1:lines:2", "big", "completed", false],
    ["root:1:lines:2", "review", "cancelled", false],
    ["root:1:lines:3", "big", "completed", false],
    ["root:1:lines:3", "review", "cancelled", false],
  ]);
  expect(line.end - T0).toBe(16_000);
});

test("a failed race: the failure stays failed, the cancelled frame is cancelled", () => {
  const line = timeline(RACE_FAILED, T0 + 99_000, server({ "root:1": "failed" }));
  expect(line.bars.map((bar) => [bar.executionId, bar.node, bar.color, bar.open])).toEqual([
    ["root:1", "start", "completed", false],
    ["root:1", "deadline", "failed", false],
    ["root:1:deadline.decision:1", "approve", "failed", false],
    ["root:1:deadline.timer:1", "timer", "cancelled", false],
  ]);
  expect(line.end - T0).toBe(8_000);
});

test("a zero-length bar keeps a visible width", () => {
  const line = timeline(RACE_FAILED, 0, server({ "root:1": "failed" }));
  const start = line.bars[0]!;
  expect(barGeometry(start, line).width).toBeCloseTo(0.8);
});

test("an empty trace has no bars", () => {
  expect(timeline([], T0, server({}))).toEqual({ bars: [], start: 0, end: 0 });
});

test("a fork is done once its branches start, and each branch's arrival at a gather is done", () => {
  const line = timeline(FORK_GATHER, T0 + 15_000, server({ "root:1": "running", "root:1:split.c:1": "running" }));
  expect(line.bars.map((bar) => [bar.executionId, bar.node, bar.color, bar.open])).toEqual([
    ["root:1", "start", "completed", false],
    ["root:1", "split", "completed", false],
    ["root:1", "ab", "completed", false],
    ["root:1:split.a:1", "a", "completed", false],
    ["root:1:split.a:1", "ab", "completed", false],
    ["root:1:split.b:1", "b", "completed", false],
    ["root:1:split.b:1", "ab", "completed", false],
    ["root:1:split.c:1", "c", "running", true],
  ]);
});
