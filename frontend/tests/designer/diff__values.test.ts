import { expect, test } from "vitest";
import { changeWhere, changesBetween, diffGraphs, shownValue, valueChanges } from "../../src/designer/diff";
import type { GraphDocument } from "../../src/graph/types";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

test("value changes go down to the setting that changed, with both values", () => {
  expect(valueChanges({ a: 1, b: { c: [1, { d: "x" }] } }, { a: 1, b: { c: [1, { d: "y" }], e: true } })).toEqual([
    { setting: "b.c[1].d", before: "x", after: "y" },
    { setting: "b.e", before: undefined, after: true },
  ]);
  expect(valueChanges([1], [1, 2], "groups")).toEqual([{ setting: "groups", before: [1], after: [1, 2] }]);
  expect(valueChanges({ a: 1 }, { a: 1 })).toEqual([]);
});

test("a version's diff lists old and new for node settings, edges, state fields and the input schema", () => {
  const after = structuredClone(invoiceSignoff) as GraphDocument & { input?: unknown };
  after.nodes = after.nodes.map((n) => (n.id === "fin" ? { ...n, title: "Money", groups: ["finance", "audit"] } : n));
  after.edges = after.edges.map((e) => (e.source === "both" ? { ...e, target: "fin" } : e));
  after.state = { ...after.state, total: { reducer: "sum", default: 5 }, count: { reducer: "sum" } };
  after.input = { type: "object", properties: { amount: { type: "number" } } };
  expect(changesBetween(invoiceSignoff, after)).toEqual([
    { kind: "node", subject: "fin", setting: "groups", before: ["finance"], after: ["finance", "audit"] },
    { kind: "node", subject: "fin", setting: "title", before: "Finance sign-off", after: "Money" },
    { kind: "edge", subject: "both/outcome:next", setting: "", before: "done", after: "fin" },
    { kind: "state", subject: "total", setting: "default", before: 0, after: 5 },
    { kind: "state", subject: "count", setting: "", before: undefined, after: { reducer: "sum" } },
    { kind: "flow", subject: "input", setting: "", before: undefined, after: { type: "object", properties: { amount: { type: "number" } } } },
  ]);
  expect(diffGraphs(invoiceSignoff, after).changes).toHaveLength(6);
  expect(diffGraphs(invoiceSignoff, structuredClone(invoiceSignoff)).changes).toEqual([]);
});

test("a change reads as where it is, and values as compact JSON cut when long", () => {
  expect(changeWhere({ kind: "node", subject: "fin", setting: "cases[1].when", before: 1, after: 2 })).toBe("fin cases[1].when");
  expect(changeWhere({ kind: "edge", subject: "split/branch:legal", setting: "", before: "a", after: "b" })).toBe("edge split branch legal");
  expect(changeWhere({ kind: "edge", subject: "fin/outcome:approved", setting: "", before: "a", after: "b" })).toBe("edge fin on approved");
  expect(changeWhere({ kind: "state", subject: "total", setting: "reducer", before: "sum", after: "max" })).toBe("state total reducer");
  expect(shownValue(undefined)).toBe("(none)");
  expect(shownValue("Money")).toBe('"Money"');
  expect(shownValue("x".repeat(100), 10)).toBe('"xxxxxxxx…');
});
