import { describe, expect, test } from "vitest";
import { checkConnection, sourceHandles, targetHandles } from "../../src/designer/handles";
import type { GraphDocument, GraphNode } from "../../src/graph/types";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

const ids = (node: GraphNode, actions: Record<string, string[]> = {}) => sourceHandles(node, actions).map((h) => h.id);

describe("source handles per node type", () => {
  test("an if has true and false", () => {
    expect(ids({ id: "x", type: "if", condition: "true" })).toEqual(["outcome:true", "outcome:false"]);
  });
  test("a switch has one per case then the default, each once", () => {
    const node: GraphNode = {
      id: "s",
      type: "switch",
      cases: [
        { when: "a", outcome: "low" },
        { when: "b", outcome: "high" },
        { when: "c", outcome: "low" },
      ],
      default: "other",
    };
    expect(ids(node)).toEqual(["outcome:low", "outcome:high", "outcome:other"]);
  });
  test("a fork has one per branch and no outcome", () => {
    expect(ids({ id: "f", type: "fork", branches: ["finance", "legal"] })).toEqual(["branch:finance", "branch:legal"]);
  });
  test("a race has its branches, then a winner outcome per branch and next", () => {
    const handles = sourceHandles({ id: "r", type: "race", branches: ["decision", "timer"] });
    expect(handles.map((h) => [h.id, h.label])).toEqual([
      ["branch:decision", "decision"],
      ["branch:timer", "timer"],
      ["outcome:decision", "won decision"],
      ["outcome:timer", "won timer"],
      ["outcome:next", "next"],
    ]);
  });
  test("foreach, loop and approval have their fixed outcomes", () => {
    expect(ids({ id: "e", type: "foreach", items: "[]", as: "x" })).toEqual(["outcome:item", "outcome:done"]);
    expect(ids({ id: "l", type: "loop", while: "true", max_iterations: 3 })).toEqual([
      "outcome:body",
      "outcome:done",
      "outcome:exhausted",
    ]);
    expect(ids({ id: "a", type: "approval", groups: ["g"], policy: "all" })).toEqual([
      "outcome:approved",
      "outcome:rejected",
    ]);
  });
  test("a task has next plus the outcomes its action declares", () => {
    expect(ids({ id: "t", type: "task", action: "http" }, { http: ["next", "error"] })).toEqual([
      "outcome:next",
      "outcome:error",
    ]);
    expect(ids({ id: "t", type: "task", action: "unknown" })).toEqual(["outcome:next"]);
  });
  test("end and fail have none", () => {
    expect(ids({ id: "e", type: "end" })).toEqual([]);
    expect(ids({ id: "f", type: "fail", error: "x" })).toEqual([]);
  });
});

describe("target handles", () => {
  test("a gather has one per slot, in declared order", () => {
    expect(targetHandles({ id: "g", type: "gather", slots: ["legal", "finance"], conflicts: "error" })).toEqual([
      { id: "slot:legal", label: "legal", slot: "legal" },
      { id: "slot:finance", label: "finance", slot: "finance" },
    ]);
  });
  test("start has none, iterations take a return, others one input", () => {
    expect(targetHandles({ id: "s", type: "start" })).toEqual([]);
    expect(targetHandles({ id: "l", type: "loop", while: "x", max_iterations: 1 }).map((h) => h.id)).toEqual(["in", "return"]);
    expect(targetHandles({ id: "t", type: "set", values: {} }).map((h) => h.id)).toEqual(["in"]);
  });
});

const open: GraphDocument = {
  ...invoiceSignoff,
  edges: invoiceSignoff.edges.filter((e) => e.slot !== "legal"),
};

describe("checkConnection", () => {
  test("an approval's approved edge onto a gather slot makes an edge with outcome and slot", () => {
    expect(
      checkConnection(open, { source: "leg", sourceHandle: "outcome:approved", target: "both", targetHandle: "slot:legal" }),
    ).toEqual({ ok: true, edge: { source: "leg", target: "both", outcome: "approved", slot: "legal" } });
  });
  test("a second edge into the same slot is allowed: slots take alternatives", () => {
    const result = checkConnection(invoiceSignoff, {
      source: "leg",
      sourceHandle: "outcome:rejected",
      target: "both",
      targetHandle: "slot:finance",
    });
    expect(result).toEqual({ ok: true, edge: { source: "leg", target: "both", outcome: "rejected", slot: "finance" } });
  });
  test("a connection into a gather but not on a slot is refused", () => {
    expect(checkConnection(open, { source: "leg", sourceHandle: "outcome:approved", target: "both", targetHandle: "in" })).toEqual({
      ok: false,
      reason: "A connection into gather both must land on one of its slots.",
    });
  });
  test("an outcome that already has a successor is refused with where it leads", () => {
    expect(checkConnection(open, { source: "fin", sourceHandle: "outcome:approved", target: "done", targetHandle: "in" })).toEqual({
      ok: false,
      reason: "Outcome “approved” of fin already leads to both; delete that edge first.",
    });
  });
  test("a fork branch edge carries the branch and no outcome", () => {
    const bare: GraphDocument = { ...open, edges: [] };
    expect(checkConnection(bare, { source: "split", sourceHandle: "branch:legal", target: "leg", targetHandle: "in" })).toEqual({
      ok: true,
      edge: { source: "split", target: "leg", branch: "legal" },
    });
  });
  test("next is left implicit", () => {
    const bare: GraphDocument = { ...open, edges: [] };
    expect(checkConnection(bare, { source: "start", sourceHandle: "outcome:next", target: "split", targetHandle: "in" })).toEqual({
      ok: true,
      edge: { source: "start", target: "split" },
    });
  });
  test("self loops, edges into start and foreign handles are refused", () => {
    const bare: GraphDocument = { ...open, edges: [] };
    expect(checkConnection(bare, { source: "fin", sourceHandle: "outcome:approved", target: "fin", targetHandle: "in" })).toMatchObject({
      ok: false,
      reason: "A node cannot connect to itself.",
    });
    expect(checkConnection(bare, { source: "fin", sourceHandle: "outcome:approved", target: "start", targetHandle: "in" })).toMatchObject({
      ok: false,
      reason: "Nothing may enter the start node.",
    });
    expect(checkConnection(bare, { source: "fin", sourceHandle: "outcome:true", target: "done", targetHandle: "in" })).toMatchObject({
      ok: false,
      reason: "A approval cannot produce outcome “true”.",
    });
  });
});
