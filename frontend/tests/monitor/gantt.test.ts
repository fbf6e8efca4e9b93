import { expect, test } from "vitest";
import { barGeometry, timeline } from "../../src/monitor/gantt";
import { FOREACH_WAITING, FORK_GATHER, RACE_FAILED } from "./traces";

const T0 = Date.parse("2026-12-04T05:00:00Z");

test("one bar per node execution, nested by execution id; a waiting node stays open until now", () => {
  const now = T0 + 20_000;
  const line = timeline(FOREACH_WAITING, true, now);
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

test("in a finished run nothing stays open: a failure stays failed, a cancelled frame is cancelled", () => {
  const line = timeline(RACE_FAILED, false, T0 + 99_000);
  expect(line.bars.map((bar) => [bar.executionId, bar.node, bar.color, bar.open])).toEqual([
    ["root:1", "start", "completed", false],
    ["root:1", "deadline", "failed", false],
    ["root:1:deadline.decision:1", "approve", "failed", false],
    ["root:1:deadline.timer:1", "timer", "cancelled", false],
  ]);
  expect(line.end - T0).toBe(8_000);
});

test("a zero-length bar keeps a visible width", () => {
  const line = timeline(RACE_FAILED, false, 0);
  const start = line.bars[0]!;
  expect(barGeometry(start, line).width).toBeCloseTo(0.8);
});

test("an empty trace has no bars", () => {
  expect(timeline([], true, T0)).toEqual({ bars: [], start: 0, end: 0 });
});

test("a fork is done once its branches start, and each branch's arrival at a gather is done", () => {
  const line = timeline(FORK_GATHER, true, T0 + 15_000);
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

test("once the run is over, a bar no event closed takes the node's final color", () => {
  const done = timeline(FORK_GATHER, false, 0, { c: "completed" });
  expect(done.bars.find((bar) => bar.node === "c")!.color).toBe("completed");
  const unknown = timeline(FORK_GATHER, false, 0, {});
  expect(unknown.bars.find((bar) => bar.node === "c")!.color).toBe("cancelled");
});
