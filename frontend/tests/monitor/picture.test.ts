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

const DANA = { user: "dana", groups: ["finance"], decision: "approve", comment: "fine", at: "2026-12-04T05:07:19.981959+00:00" };

test("a tree's decisions are read by node path, and a vote that is not one is dropped", () => {
  const picture = pictureFrom({
    status: "waiting",
    decisions: {
      fin: [DANA, { user: "eve", decision: "maybe", at: "2026-12-04T05:08:00Z" }, "approve"],
      leg: [{ user: "lee", groups: ["legal", 7], decision: "reject", at: "2026-12-04T05:09:00Z" }],
      odd: "approve",
    },
  });
  expect(picture.decisions).toEqual({
    fin: [DANA],
    leg: [{ user: "lee", groups: ["legal"], decision: "reject", comment: "", at: "2026-12-04T05:09:00Z" }],
  });
  expect(pictureFrom({ status: "running" }).decisions).toEqual({});
});

test("a delta's decisions replace the votes of the paths it names and keep the others", () => {
  const before = pictureFrom({ status: "waiting", decisions: { fin: [DANA] } });
  const lee = { user: "lee", groups: ["legal"], decision: "approve", comment: "ok <b>by</b> me", at: "2026-12-04T05:09:00Z" };
  const after = applyDelta(before, { type: "delta", seq: 3, status: "completed", decisions: { leg: [lee] } });
  expect(after.decisions).toEqual({ fin: [DANA], leg: [lee] });
  const again = applyDelta(after, { decisions: { fin: [{ ...DANA, comment: "fine, twice" }] } });
  expect(again.decisions.fin).toEqual([{ ...DANA, comment: "fine, twice" }]);
  expect(again.decisions.leg).toEqual([lee]);
  expect(applyDelta(after, { colors: {} }).decisions).toEqual({ fin: [DANA], leg: [lee] });
});
