import { expect, test } from "vitest";
import { applyDelta, pictureFrom } from "../../src/monitor/picture";

test("a tree without reasons gives an empty reason map and drops unknown colors", () => {
  const picture = pictureFrom({
    run: "r",
    status: "running",
    nodes: { start: { status: "completed", execution_id: "root:1", result: null, attempt: 1 } },
    colors: { start: "completed", a: "pending", b: "purple" },
  });
  expect(picture.status).toBe("running");
  expect(picture.colors).toEqual({ start: "completed", a: "pending" });
  expect(picture.reasons).toEqual({});
  expect(Object.keys(picture.nodes)).toEqual(["start"]);
});

test("a delta replaces only what it names and keeps the rest", () => {
  const before = pictureFrom({
    status: "running",
    nodes: {},
    colors: { a: "running", b: "pending" },
    reasons: { a: "running: action in flight", b: "pending: not reached" },
  });
  const after = applyDelta(before, {
    type: "delta",
    seq: 2,
    status: "completed",
    nodes: { a: { status: "completed", execution_id: "root:1", result: 3, attempt: 1 } },
    colors: { a: "completed" },
    reasons: { a: "completed" },
  });
  expect(after.status).toBe("completed");
  expect(after.colors).toEqual({ a: "completed", b: "pending" });
  expect(after.reasons).toEqual({ a: "completed", b: "pending: not reached" });
  expect(after.nodes.a?.result).toBe(3);
  expect(before.colors.a).toBe("running");
});

test("a delta without a status keeps the run's status", () => {
  expect(applyDelta(pictureFrom({ status: "waiting" }), { colors: {} }).status).toBe("waiting");
});
