import { readFileSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { autoLayout } from "../../src/designer/autolayout";
import { editorNodeSize } from "../../src/designer/serialize";
import { parseGraph } from "../../src/graph/parse";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

const DEMO_DIR = resolve(import.meta.dirname, "../../../designer/demo_flows");
const demos = readdirSync(DEMO_DIR)
  .filter((name) => name.endsWith(".json"))
  .map((name) => [name, parseGraph(JSON.parse(readFileSync(resolve(DEMO_DIR, name), "utf8")))] as const);

describe("autoLayout", () => {
  test("a fork's branches are laid out in declared order, left to right", () => {
    const at = autoLayout(invoiceSignoff);
    expect(at.fin!.x).toBeLessThan(at.leg!.x);
    expect(at.split!.y).toBeLessThan(at.fin!.y);
    expect(at.fin!.y).toBe(at.leg!.y);
  });

  test("the declared order wins even when the document lists the nodes the other way", () => {
    const swapped = { ...invoiceSignoff, nodes: [...invoiceSignoff.nodes].reverse(), edges: [...invoiceSignoff.edges].reverse() };
    const at = autoLayout(swapped);
    expect(at.fin!.x).toBeLessThan(at.leg!.x);
  });

  test.each(demos)("%s: every node placed, no two nodes overlap, the stored layout ignored", (_name, doc) => {
    const at = autoLayout({ ...doc, layout: { [doc.nodes[0]!.id]: { x: 9999, y: 9999 } } });
    expect(Object.keys(at).sort()).toEqual(doc.nodes.map((n) => n.id).sort());
    const boxes = doc.nodes.map((node) => ({ ...at[node.id]!, ...editorNodeSize(node) }));
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i]!, boxes[j]!];
        const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
        expect(apart).toBe(true);
      }
    }
  });
});
