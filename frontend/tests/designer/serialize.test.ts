import { readFileSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { fromEditorFlow, toEditorFlow, withoutLayout } from "../../src/designer/serialize";
import { parseGraph } from "../../src/graph/parse";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

const DEMO_DIR = resolve(import.meta.dirname, "../../../designer/demo_flows");
const demos = readdirSync(DEMO_DIR)
  .filter((name) => name.endsWith(".json"))
  .map((name) => [name, parseGraph(JSON.parse(readFileSync(resolve(DEMO_DIR, name), "utf8")))] as const);

describe("document ⇄ React Flow", () => {
  test.each(demos)("%s round-trips exactly, layout aside, member order kept", (_name, doc) => {
    const back = fromEditorFlow(doc, toEditorFlow(doc));
    expect(JSON.stringify(withoutLayout(back))).toEqual(JSON.stringify(withoutLayout(doc)));
    expect(Object.keys(back.layout!).sort()).toEqual(doc.nodes.map((n) => n.id).sort());
  });

  test("stored positions are kept", () => {
    const back = fromEditorFlow(invoiceSignoff, toEditorFlow(invoiceSignoff));
    expect(back.layout!.start).toEqual(invoiceSignoff.layout!.start);
  });

  test("edges enter by their slot handle and leave by their outcome or branch handle", () => {
    const { edges } = toEditorFlow(invoiceSignoff);
    expect(edges.map((e) => [e.source, e.sourceHandle, e.target, e.targetHandle])).toEqual([
      ["start", "outcome:next", "split", "in"],
      ["split", "branch:finance", "fin", "in"],
      ["split", "branch:legal", "leg", "in"],
      ["fin", "outcome:approved", "both", "slot:finance"],
      ["leg", "outcome:approved", "both", "slot:legal"],
      ["both", "outcome:next", "done", "in"],
    ]);
  });

  test("a body's return enters the foreach's return handle and reads as a return", () => {
    const doc = demos.find(([name]) => name === "batch-line-approval.json")![1];
    const returns = toEditorFlow(doc).edges.filter((e) => e.data!.back);
    expect(returns.length).toBeGreaterThan(0);
    for (const edge of returns) {
      expect(edge.targetHandle).toBe("return");
      expect(String(edge.label)).toMatch(/^↩/);
    }
  });

  test("parallel identical edges get distinct ids", () => {
    const doc = { ...invoiceSignoff, edges: [...invoiceSignoff.edges, invoiceSignoff.edges[0]!] };
    const ids = toEditorFlow(doc).edges.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("returns", () => {
  test("a return is its own edge type with a lane right of every node it passes", () => {
    const doc = demos.find(([name]) => name === "batch-line-approval.json")![1];
    const { nodes, edges } = toEditorFlow(doc);
    for (const edge of edges.filter((e) => e.data!.back)) {
      expect(edge.type).toBe("return");
      const top = nodes.find((n) => n.id === edge.target)!.position.y;
      const bottom = nodes.find((n) => n.id === edge.source)!.position.y;
      for (const node of nodes.filter((n) => n.position.y >= top && n.position.y <= bottom)) {
        expect(edge.data!.lane!).toBeGreaterThan(node.position.x + node.width!);
      }
    }
  });
});

describe("handle positions", () => {
  test("labels never overlap: each gets its room, the row centred", async () => {
    const { editorNodeSize, portFractions, portLabels } = await import("../../src/designer/serialize");
    const race = { id: "r", type: "race" as const, branches: ["decision", "timer"] };
    const { width } = editorNodeSize(race);
    const labels = portLabels(race).sources;
    const at = portFractions(labels, width).map((f) => f * width);
    for (let i = 1; i < at.length; i++) {
      const gap = at[i]! - at[i - 1]!;
      const needed = (labels[i]!.length + labels[i - 1]!.length) * 7.5 / 2;
      expect(gap).toBeGreaterThan(needed);
    }
    expect(at[0]!).toBeGreaterThan(0);
    expect(at.at(-1)!).toBeLessThan(width);
  });
});
