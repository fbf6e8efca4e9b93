import { expect, test } from "vitest";
import { describeActivation, gatherActivations } from "../../src/monitor/gather";
import { FORK_GATHER } from "./traces";

test("a merged gather names each slot's branch and the merge order", () => {
  const [activation, ...rest] = gatherActivations(FORK_GATHER, "ab");
  expect(rest).toEqual([]);
  expect(activation).toEqual({
    context: "root:1",
    filled: { a: "root:1:split.a:1", b: "root:1:split.b:1" },
    order: ["a", "b"],
  });
  expect(describeActivation(activation!, ["a", "b"])).toBe(
    "root:1: a ← root:1:split.a:1, b ← root:1:split.b:1; merged in order a, b",
  );
});

test("a gather still waiting shows what is filled and what is empty", () => {
  const [activation] = gatherActivations(FORK_GATHER.slice(0, 9), "ab");
  expect(describeActivation(activation!, ["a", "b"])).toBe(
    "root:1: a ← root:1:split.a:1, b ← (empty); waiting for the empty slots",
  );
});

test("a node that is no gather has no activations", () => {
  expect(gatherActivations(FORK_GATHER, "split")).toEqual([]);
});
