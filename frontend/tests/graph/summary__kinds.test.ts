import { describe, expect, test } from "vitest";
import { edgeLabel, type GraphNode, kindSummary, NODE_TYPES } from "../../src/graph";

const ONE_OF_EACH: [GraphNode, string][] = [
  [{ id: "a", type: "start" }, "start"],
  [{ id: "a", type: "end" }, "end"],
  [{ id: "a", type: "task", action: "http.request", params: { url: "x" } }, "task · http.request"],
  [{ id: "a", type: "set", values: { tries: "state.tries + 1", log: "['x']" } }, "set · tries, log"],
  [{ id: "a", type: "if", condition: "state.total > 10" }, "if · state.total > 10"],
  [
    { id: "a", type: "switch", cases: [{ when: "x", outcome: "a" }, { when: "y", outcome: "b" }], default: "c" },
    "switch · 2 cases",
  ],
  [{ id: "a", type: "switch", cases: [{ when: "x", outcome: "a" }], default: "c" }, "switch · 1 case"],
  [{ id: "a", type: "fork", branches: ["finance", "legal"] }, "fork · finance, legal"],
  [{ id: "a", type: "gather", slots: ["finance", "legal"], conflicts: "error" }, "gather · finance, legal"],
  [{ id: "a", type: "foreach", items: "input.lines", as: "line", concurrency: 8 }, "foreach · line in input.lines"],
  [{ id: "a", type: "loop", while: "state.n < 3", max_iterations: 5 }, "loop · while state.n < 3"],
  [{ id: "a", type: "race", branches: ["reply", "timer"] }, "race · reply, timer"],
  [{ id: "a", type: "approval", groups: ["finance", "legal"], policy: "all" }, "approval · finance, legal · all"],
  [{ id: "a", type: "approval", groups: ["board"], policy: { quorum: 2 } }, "approval · board · quorum 2"],
  [{ id: "a", type: "wait", seconds: 30 }, "wait · 30 s"],
  [{ id: "a", type: "wait", until: "input.due" }, "wait · until input.due"],
  [{ id: "a", type: "subflow", flow: "kyc-check" }, "subflow · kyc-check"],
  [{ id: "a", type: "subflow", flow: "kyc-check", version: 3 }, "subflow · kyc-check v3"],
  [{ id: "a", type: "fail", error: "Over budget" }, "fail · Over budget"],
];

describe("kindSummary", () => {
  test.each(ONE_OF_EACH)("summarises %o as %s", (node, summary) => {
    expect(kindSummary(node)).toBe(summary);
  });

  test("the table above covers all fifteen node types", () => {
    expect(new Set(ONE_OF_EACH.map(([node]) => node.type))).toEqual(new Set(NODE_TYPES));
  });

  test("missing config reads as a question mark, never as undefined", () => {
    const drafts = [
      { id: "a", type: "task" },
      { id: "a", type: "fork", branches: [] },
      { id: "a", type: "foreach" },
      { id: "a", type: "approval" },
    ] as unknown as GraphNode[];
    expect(drafts.map(kindSummary)).toEqual(["task · ?", "fork · ?", "foreach · ? in ?", "approval · ? · ?"]);
  });
});

describe("edgeLabel", () => {
  test.each([
    [{ source: "a", target: "b" }, ""],
    [{ source: "a", target: "b", outcome: "next" }, "next"],
    [{ source: "a", target: "b", outcome: "rejected" }, "rejected"],
    [{ source: "a", target: "b", branch: "legal" }, "legal"],
    [{ source: "a", target: "b", slot: "legal" }, "slot legal"],
    [{ source: "a", target: "b", outcome: "approved", slot: "legal" }, "approved · slot legal"],
    [{ source: "a", target: "b", branch: "legal", slot: "legal" }, "legal · slot legal"],
  ])("labels %o as %j", (edge, label) => {
    expect(edgeLabel(edge)).toBe(label);
  });
});
