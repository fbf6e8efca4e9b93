import { expect, test } from "vitest";
import { colorsForExecution } from "../../src/monitor/traceColors";
import { BATCH_NODES, FOREACH_WAITING, RACE_FAILED } from "./traces";

test("item 2 of the foreach: big took true, review waits, its other paths are not reached yet", () => {
  const { colors, reasons } = colorsForExecution(FOREACH_WAITING, BATCH_NODES, "root:1:lines:2", false);
  expect(colors).toEqual({
    start: "completed",
    lines: "running",
    big: "completed",
    review: "waiting",
    ok: "pending",
    small: "pending",
    done: "pending",
  });
  expect(reasons.big).toBe("completed in root:1:lines:2 (outcome true) — trace event node.completed #6");
  expect(reasons.small).toBe("pending: not reached yet in root:1:lines:2");
});

test("a finished item: what it did not reach is skipped", () => {
  const { colors, reasons } = colorsForExecution(FOREACH_WAITING, BATCH_NODES, "root:1:lines:1", true);
  expect([colors.big, colors.small, colors.review, colors.ok]).toEqual(["completed", "completed", "skipped", "skipped"]);
  expect(reasons.review).toBe("skipped: not reached in root:1:lines:1 (no trace event for this node there)");
});

test("the root shows the newest event of each node across its executions", () => {
  const { colors } = colorsForExecution(FOREACH_WAITING, BATCH_NODES, "root:1", false);
  expect([colors.start, colors.big, colors.review, colors.small]).toEqual(["completed", "completed", "waiting", "completed"]);
});

test("a race's cancelled branch shows its node cancelled with the reason", () => {
  const nodes = ["start", "deadline", "approve", "timer", "decided", "escalate", "done"];
  const { colors, reasons } = colorsForExecution(RACE_FAILED, nodes, "root:1:deadline.timer:1", true);
  expect(colors.timer).toBe("cancelled");
  expect(reasons.timer).toBe("cancelled in root:1:deadline.timer:1: title: 'item' — trace event frame.cancelled #7");
  expect(colors.deadline).toBe("failed");
  expect(colors.approve).toBe("skipped");
});
