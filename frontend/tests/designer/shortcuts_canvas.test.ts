import { describe, expect, test } from "vitest";
import { editorCanvas } from "../../src/designer/canvas";
import { commandFor, type KeyPress } from "../../src/designer/shortcuts";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

const press = (key: string, extra: Partial<KeyPress> = {}): KeyPress => ({
  key,
  ctrlKey: false,
  metaKey: false,
  shiftKey: false,
  inField: false,
  ...extra,
});

describe("shortcuts", () => {
  test("undo, redo in both spellings, and the Mac command key", () => {
    expect(commandFor(press("z", { ctrlKey: true }))).toBe("undo");
    expect(commandFor(press("Z", { ctrlKey: true, shiftKey: true }))).toBe("redo");
    expect(commandFor(press("y", { ctrlKey: true }))).toBe("redo");
    expect(commandFor(press("z", { metaKey: true }))).toBe("undo");
  });
  test("keys typed into a field stay there, except Escape", () => {
    expect(commandFor(press("z", { ctrlKey: true, inField: true }))).toBeNull();
    expect(commandFor(press("Backspace", { inField: true }))).toBeNull();
    expect(commandFor(press("Escape", { inField: true }))).toBe("escape");
  });
  test("single keys", () => {
    expect(commandFor(press("Delete"))).toBe("delete");
    expect(commandFor(press("/"))).toBe("quickAdd");
    expect(commandFor(press("?", { shiftKey: true }))).toBe("help");
    expect(commandFor(press("L", { shiftKey: true }))).toBe("autoLayout");
    expect(commandFor(press("l"))).toBeNull();
    expect(commandFor(press("q", { ctrlKey: true }))).toBeNull();
  });
});

const state = {
  actionOutcomes: {},
  findings: [],
  dragging: null,
  selectedNodes: new Set<string>(),
  selectedEdges: new Set<string>(),
  readOnly: false,
  diff: null,
};

describe("editorCanvas", () => {
  test("a gather's slots are ports labelled in order, with how many edges feed each", () => {
    const doc = { ...invoiceSignoff, edges: [...invoiceSignoff.edges, { source: "leg", outcome: "rejected", target: "both", slot: "finance" }] };
    const both = editorCanvas(doc, state).nodes.find((n) => n.id === "both")!;
    const targets = both.data.ports!.targets;
    expect(targets.map(({ id, label, feeds }) => ({ id, label, feeds }))).toEqual([
      { id: "slot:finance", label: "finance", feeds: 2 },
      { id: "slot:legal", label: "legal", feeds: 1 },
    ]);
    // Each label gets its own room, the row centred: finance left of legal, both inside.
    expect(0 < targets[0]!.at! && targets[0]!.at! < targets[1]!.at! && targets[1]!.at! < 1).toBe(true);
    expect(both.data.ports!.sources).toEqual([{ id: "outcome:next", label: "next", at: 0.5 }]);
  });

  test("findings mark their node and edge with the worst severity", () => {
    const findings = [
      { severity: "warning" as const, message: "w", node: "split", edge_index: 2 },
      { severity: "error" as const, message: "e", node: "split", edge_index: null },
    ];
    const { nodes, edges } = editorCanvas(invoiceSignoff, { ...state, findings });
    const split = nodes.find((n) => n.id === "split")!;
    expect([split.data.problem, split.data.problemText]).toEqual(["error", "w\ne"]);
    expect(edges[2]!.className).toBe("braid-edge--warning");
    expect(edges[2]!.label).toBe("⚠ warning");
    expect(nodes.find((n) => n.id === "fin")!.data.problem).toBeUndefined();
  });

  test("read-only nodes neither drag nor connect; selection and drag positions are applied", () => {
    const { nodes } = editorCanvas(invoiceSignoff, {
      ...state,
      readOnly: true,
      selectedNodes: new Set(["fin"]),
      dragging: { fin: { x: 5, y: 6 } },
    });
    const fin = nodes.find((n) => n.id === "fin")!;
    expect([fin.draggable, fin.connectable, fin.selected, fin.data.editable, fin.position]).toEqual([false, false, true, false, { x: 5, y: 6 }]);
  });
});
