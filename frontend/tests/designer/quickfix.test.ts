import { expect, test } from "vitest";
import { applyFix, quickFix } from "../../src/designer/quickfix";
import type { GraphDocument } from "../../src/graph/types";

const DOC = {
  format: "braid.graph/1",
  state: { seen: { reducer: "append" } },
  nodes: [
    { id: "start", type: "start" },
    { id: "calc", type: "set", values: { total: "1", seen: "[1]" } },
    { id: "pay", type: "task", action: "noop", output: "receipt" },
    { id: "each", type: "foreach", items: "[1]", as: "x", on_item_failure: "collect", errors: "failures" },
    { id: "call", type: "subflow", flow: "child", output: { score: "risk" } },
    { id: "done", type: "end" },
  ],
  edges: [],
} as unknown as GraphDocument;

const problem = (node: string, field: string, code = "state.write_undeclared") => ({ code, node, field });

test("an undeclared write offers to declare the field: overwrite for values and outputs, append for foreach errors", () => {
  expect(quickFix(DOC, problem("calc", "values.total"))).toEqual({ label: "Declare `total` (overwrite)", field: "total", reducer: "overwrite" });
  expect(quickFix(DOC, problem("pay", "output"))).toEqual({ label: "Declare `receipt` (overwrite)", field: "receipt", reducer: "overwrite" });
  expect(quickFix(DOC, problem("call", "output.score"))).toEqual({ label: "Declare `score` (overwrite)", field: "score", reducer: "overwrite" });
  expect(quickFix(DOC, problem("each", "errors"))).toEqual({ label: "Declare `failures` (append)", field: "failures", reducer: "append" });
});

test("other problems, fields already declared and unknown nodes offer no fix", () => {
  expect(quickFix(DOC, problem("calc", "values.seen"))).toBeNull();
  expect(quickFix(DOC, problem("calc", "values.total", "state.read_undeclared"))).toBeNull();
  expect(quickFix(DOC, problem("gone", "values.total"))).toBeNull();
  expect(quickFix(DOC, problem("pay", "params"))).toBeNull();
});

test("applying the fix declares the field and keeps every other declaration", () => {
  const fix = quickFix(DOC, problem("calc", "values.total"));
  if (fix === null) throw new Error("expected a fix");
  const fixed = applyFix(DOC, fix);
  expect(fixed.state).toEqual({ seen: { reducer: "append" }, total: { reducer: "overwrite" } });
  expect(fixed.nodes).toBe(DOC.nodes);
  expect(quickFix(fixed, problem("calc", "values.total"))).toBeNull();
});
