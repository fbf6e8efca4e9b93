import { describe, expect, test } from "vitest";
import {
  addNode,
  copyNodes,
  duplicateNodes,
  freeId,
  idProblem,
  moveListEntry,
  pasteNodes,
  removeElements,
  removeListEntry,
  renameListEntry,
  replaceNode,
} from "../../src/designer/ops";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

describe("editing operations", () => {
  test("addNode picks a free id, a default config and a position", () => {
    const { doc, id } = addNode(invoiceSignoff, "gather", { x: 10.4, y: 20.6 });
    expect(id).toBe("gather");
    expect(doc.nodes.at(-1)).toEqual({ id: "gather", type: "gather", slots: ["a", "b"], conflicts: "error" });
    expect(doc.layout!.gather).toEqual({ x: 10, y: 21 });
    expect(addNode(doc, "gather", { x: 0, y: 0 }).id).toBe("gather2");
    expect(invoiceSignoff.nodes).toHaveLength(6);
  });

  test("freeId numbers a taken id", () => {
    expect(freeId(invoiceSignoff, "fin")).toBe("fin2");
    expect(freeId(invoiceSignoff, "fin", new Set(["fin2"]))).toBe("fin3");
  });

  test("removing a node removes its edges and its position", () => {
    const doc = removeElements(invoiceSignoff, new Set(["leg"]));
    expect(doc.nodes.map((n) => n.id)).toEqual(["start", "split", "fin", "both", "done"]);
    expect(doc.edges.some((e) => e.source === "leg" || e.target === "leg")).toBe(false);
    expect(doc.edges).toHaveLength(4);
  });

  test("removing an edge by index keeps the others in order", () => {
    const doc = removeElements(invoiceSignoff, new Set(), new Set([0]));
    expect(doc.edges).toEqual(invoiceSignoff.edges.slice(1));
  });

  test("renaming a node carries the id into edges and layout", () => {
    const doc = replaceNode(invoiceSignoff, "start", { id: "begin", type: "start" });
    expect(doc.edges[0]).toEqual({ source: "begin", target: "split" });
    expect(doc.layout).toEqual({ begin: { x: 0, y: 0 } });
    expect(idProblem(invoiceSignoff, "fin", "leg")).toBe("Another node is called leg.");
    expect(idProblem(invoiceSignoff, "fin", "a b")).toBe("Use letters, digits, _ and - only.");
    expect(idProblem(invoiceSignoff, "fin", "fin")).toBeNull();
  });

  test("renaming a slot renames the edges into it; removing a slot removes them", () => {
    const renamed = renameListEntry(invoiceSignoff, "both", "slots", "legal", "law");
    expect(renamed.nodes[4]).toEqual({ id: "both", type: "gather", slots: ["finance", "law"], conflicts: "error" });
    expect(renamed.edges[4]).toEqual({ source: "leg", outcome: "approved", target: "both", slot: "law" });
    const removed = removeListEntry(invoiceSignoff, "both", "slots", "legal");
    expect(removed.edges.filter((e) => e.target === "both")).toEqual([invoiceSignoff.edges[3]]);
  });

  test("renaming a branch renames the branch edge", () => {
    const doc = renameListEntry(invoiceSignoff, "split", "branches", "finance", "money");
    expect(doc.edges[1]).toEqual({ source: "split", branch: "money", target: "fin" });
  });

  test("moving a slot changes the merge order", () => {
    const doc = moveListEntry(invoiceSignoff, "both", "slots", "legal", -1);
    expect((doc.nodes[4] as { slots: string[] }).slots).toEqual(["legal", "finance"]);
  });

  test("copy and paste brings nodes and the edges among them under fresh ids", () => {
    const clip = copyNodes(invoiceSignoff, new Set(["fin", "both"]));
    expect(clip.edges).toEqual([invoiceSignoff.edges[3]]);
    const { doc, ids } = pasteNodes(invoiceSignoff, JSON.parse(JSON.stringify(clip)), { x: 50, y: 0 });
    expect(ids).toEqual(["fin2", "both2"]);
    expect(doc.edges.at(-1)).toEqual({ source: "fin2", outcome: "approved", target: "both2", slot: "finance" });
    expect(doc.layout!.fin2).toBeDefined();
  });

  test("duplicate of start keeps the original untouched", () => {
    const { doc, ids } = duplicateNodes(invoiceSignoff, new Set(["start"]));
    expect(ids).toEqual(["start2"]);
    expect(doc.layout!.start2).toEqual({ x: 40, y: 40 });
    expect(invoiceSignoff.layout).toEqual({ start: { x: 0, y: 0 } });
  });
});

describe("state and config helpers", () => {
  test("stateWriters names the nodes that write each field", async () => {
    const { stateWriters } = await import("../../src/designer/ops");
    const doc = {
      ...invoiceSignoff,
      nodes: [
        ...invoiceSignoff.nodes,
        { id: "s", type: "set" as const, values: { log: "['x']", total: "1" } },
        { id: "t", type: "task" as const, action: "noop", output: "invoice" },
        { id: "t2", type: "task" as const, action: "noop", output: "invoice" },
      ],
    };
    expect(stateWriters(doc)).toEqual({ log: ["s"], total: ["s"], invoice: ["t", "t2"] });
  });

  test("patchNode sets and removes members in place", async () => {
    const { patchNode } = await import("../../src/designer/ops");
    const doc = patchNode(invoiceSignoff, "fin", { title: undefined, policy: { quorum: 2 } });
    expect(doc.nodes[2]).toEqual({ id: "fin", type: "approval", groups: ["finance"], policy: { quorum: 2 } });
  });
});
