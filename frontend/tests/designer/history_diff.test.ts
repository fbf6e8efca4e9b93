import { describe, expect, test } from "vitest";
import { diffGraphs } from "../../src/designer/diff";
import { canRedo, canUndo, createHistory, push, redo, undo } from "../../src/designer/history";
import { addNode, moveNodes, removeElements } from "../../src/designer/ops";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

describe("history", () => {
  test("undo and redo walk whole snapshots back and forth", () => {
    let h = createHistory(invoiceSignoff);
    const a = addNode(invoiceSignoff, "end", { x: 0, y: 0 }).doc;
    h = push(h, a);
    const b = removeElements(a, new Set(["leg"]));
    h = push(h, b);
    h = undo(h);
    expect(h.present).toBe(a);
    h = undo(h);
    expect(h.present).toBe(invoiceSignoff);
    expect(canUndo(h)).toBe(false);
    h = redo(redo(h));
    expect(h.present).toBe(b);
    expect(canRedo(h)).toBe(false);
  });

  test("an unchanged snapshot records nothing and a new edit drops the redo steps", () => {
    let h = push(createHistory(invoiceSignoff), structuredClone(invoiceSignoff));
    expect(canUndo(h)).toBe(false);
    h = push(h, addNode(invoiceSignoff, "end", { x: 0, y: 0 }).doc);
    h = undo(h);
    h = push(h, addNode(invoiceSignoff, "fail", { x: 0, y: 0 }).doc);
    expect(canRedo(h)).toBe(false);
    expect(h.past).toEqual([invoiceSignoff]);
  });

  test("the oldest steps fall off past the limit", () => {
    let h = createHistory(0);
    for (let n = 1; n <= 5; n += 1) h = push(h, n, 3);
    expect(h.past).toEqual([2, 3, 4]);
  });
});

describe("diff", () => {
  test("names added, removed and changed nodes and edges, layout aside", () => {
    let after = removeElements(invoiceSignoff, new Set(["leg"]));
    after = addNode(after, "fail", { x: 1, y: 1 }).doc;
    after = { ...after, nodes: after.nodes.map((n) => (n.id === "fin" ? { ...n, title: "Money" } : n)) };
    after = moveNodes(after, { start: { x: 500, y: 500 } });
    expect(diffGraphs(invoiceSignoff, after)).toEqual({
      nodes: { added: ["fail"], removed: ["leg"], changed: ["fin"] },
      edges: { added: [], removed: ["split/branch:legal->leg", "leg/outcome:approved->both/slot:legal"] },
      members: [],
      changes: [
        { kind: "node", subject: "fin", setting: "title", before: "Finance sign-off", after: "Money" },
        { kind: "edge", subject: "split/branch:legal", setting: "", before: "leg", after: undefined },
        { kind: "edge", subject: "leg/outcome:approved", setting: "", before: "both (slot legal)", after: undefined },
      ],
      same: false,
    });
  });

  test("member order and layout carry no meaning; state changes are named", () => {
    const reordered = { ...invoiceSignoff, nodes: invoiceSignoff.nodes.map((n) => Object.fromEntries(Object.entries(n).reverse())) };
    expect(diffGraphs(invoiceSignoff, moveNodes(reordered as typeof invoiceSignoff, { start: { x: 9, y: 9 } })).same).toBe(true);
    expect(diffGraphs(invoiceSignoff, { ...invoiceSignoff, state: {} }).members).toEqual(["state"]);
  });
});
