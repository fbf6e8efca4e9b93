/**
 * Auto-layout for the designer, top to bottom: dagre ranks the nodes, then a
 * few sweeps order each rank by where its edges leave their parents' ports
 * (an outcome's or branch's handle, left to right in declared order), so that
 * a fork's first branch goes left of its second and edges do not cross
 * needlessly. Dagre alone does not know ports; see frontend/README.md.
 */

import { findBackEdges, layoutGraph } from "../graph/layout";
import type { GraphDocument, Point } from "../graph/types";
import { edgeSourceHandle, edgeTargetHandle, sourceHandles, targetHandles } from "./handles";
import { editorNodeSize, portFractions, portLabels } from "./serialize";

const GAP = 48;
const SWEEPS = 4;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The x of the handle an edge uses on a node, where the editor draws it. */
function portX(box: Box, labels: readonly string[], index: number): number {
  return box.x + box.width * (portFractions(labels, box.width)[index] ?? 0.5);
}

/** Return a position for every node of the document, its own layout ignored. */
export function autoLayout(doc: GraphDocument, actionOutcomes: Record<string, string[]> = {}): Record<string, Point> {
  const bare: GraphDocument = { ...doc };
  delete bare.layout;
  const sizes = new Map(doc.nodes.map((node) => [node.id, editorNodeSize(node, actionOutcomes)]));
  const placed = layoutGraph(bare, sizes).positions;
  const boxes = new Map<string, Box>(doc.nodes.map((node) => [node.id, { ...placed.get(node.id)!, ...sizes.get(node.id)! }]));
  const byId = new Map(doc.nodes.map((node) => [node.id, node]));
  const back = findBackEdges(doc);
  const incoming = new Map<string, { source: string; out: number; outs: string[]; in: number; ins: string[] }[]>();
  doc.edges.forEach((edge, index) => {
    const source = byId.get(edge.source);
    const target = byId.get(edge.target);
    if (back.has(index) || source === undefined || target === undefined) return;
    const outs = sourceHandles(source, actionOutcomes);
    const ins = targetHandles(target).filter((h) => h.id !== "return");
    const list = incoming.get(edge.target) ?? [];
    list.push({
      source: edge.source,
      out: Math.max(0, outs.findIndex((h) => h.id === edgeSourceHandle(edge))),
      outs: portLabels(source, actionOutcomes).sources,
      in: Math.max(0, ins.findIndex((h) => h.id === edgeTargetHandle(edge, target, false))),
      ins: portLabels(target, actionOutcomes).targets,
    });
    incoming.set(edge.target, list);
  });
  // Ranks are rows of equal centre height in dagre's result.
  const ranks = new Map<number, string[]>();
  for (const [id, box] of boxes) {
    const key = Math.round(box.y + box.height / 2);
    ranks.set(key, [...(ranks.get(key) ?? []), id]);
  }
  const order = [...ranks.keys()].sort((a, b) => a - b);
  for (let sweep = 0; sweep < SWEEPS; sweep += 1) {
    for (const key of order) {
      const row = ranks.get(key)!;
      const wanted = new Map<string, number>();
      for (const id of row) {
        const box = boxes.get(id)!;
        const edges = incoming.get(id) ?? [];
        if (edges.length === 0) {
          wanted.set(id, box.x + box.width / 2);
          continue;
        }
        // Centre the node so that its entry handle sits under its parent's exit handle.
        const xs = edges.map((e) => {
          const parent = boxes.get(e.source)!;
          return portX(parent, e.outs, e.out) - (portX(box, e.ins, e.in) - box.x) + box.width / 2;
        });
        wanted.set(id, xs.reduce((sum, x) => sum + x, 0) / xs.length);
      }
      row.sort((a, b) => wanted.get(a)! - wanted.get(b)! || boxes.get(a)!.x - boxes.get(b)!.x);
      let right = -Infinity;
      for (const id of row) {
        const box = boxes.get(id)!;
        box.x = Math.max(wanted.get(id)! - box.width / 2, right + GAP);
        right = box.x + box.width;
      }
    }
  }
  const minX = Math.min(...[...boxes.values()].map((b) => b.x));
  return Object.fromEntries([...boxes].map(([id, box]) => [id, { x: Math.round(box.x - minX), y: Math.round(box.y) }]));
}
