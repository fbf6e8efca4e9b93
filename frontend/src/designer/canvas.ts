/**
 * The editor's canvas as a pure function of the document and the view state:
 * labelled ports, validation findings, alternatives per slot, the diff
 * against a version, selection and drag positions. No React.
 */

import type { GraphDiff } from "./diff";
import { sourceHandles, targetHandles } from "./handles";
import { type EditorEdge, type EditorNode, portFractions, toEditorFlow } from "./serialize";
import type { GraphDocument, Point } from "../graph/types";

/** A validation finding, as the validate API reports it (the fields the canvas uses). */
export interface Finding {
  severity: "error" | "warning";
  message: string;
  node: string | null;
  edge_index: number | null;
}

export interface CanvasState {
  actionOutcomes: Record<string, string[]>;
  findings: readonly Finding[];
  /** Positions of nodes being dragged, not yet committed. */
  dragging: Record<string, Point> | null;
  selectedNodes: ReadonlySet<string>;
  selectedEdges: ReadonlySet<string>;
  readOnly: boolean;
  /** The diff from the draft to the version on show, when one is. */
  diff: GraphDiff | null;
}

function worst(found: readonly Finding[]): "error" | "warning" {
  return found.some((f) => f.severity === "error") ? "error" : "warning";
}

function group<K>(findings: readonly Finding[], key: (f: Finding) => K | null): Map<K, Finding[]> {
  const groups = new Map<K, Finding[]>();
  for (const finding of findings) {
    const k = key(finding);
    if (k !== null) groups.set(k, [...(groups.get(k) ?? []), finding]);
  }
  return groups;
}

/** How many edges arrive at each gather slot, by `target\u0000slot`. */
export function slotFeeds(doc: GraphDocument): Map<string, number> {
  const feeds = new Map<string, number>();
  for (const edge of doc.edges) {
    if (edge.slot !== undefined) feeds.set(`${edge.target}\u0000${edge.slot}`, (feeds.get(`${edge.target}\u0000${edge.slot}`) ?? 0) + 1);
  }
  return feeds;
}

function decorateNode(node: EditorNode, state: CanvasState, feeds: Map<string, number>, found: Finding[]): EditorNode {
  const graphNode = node.data.node;
  const targets = targetHandles(graphNode);
  const data = { ...node.data };
  const sources = sourceHandles(graphNode, state.actionOutcomes);
  const entries = targets.filter((h) => h.id !== "return");
  const width = node.width!;
  const sourceAt = portFractions(sources.map((h) => h.label), width);
  const targetAt = portFractions(entries.map((h) => h.label), width);
  data.ports = {
    sources: sources.map((h, i) => ({ id: h.id, label: h.label, at: sourceAt[i]! })),
    targets: entries.map((h, i) => ({
      id: h.id,
      label: h.label,
      feeds: h.slot === undefined ? 0 : (feeds.get(`${node.id}\u0000${h.slot}`) ?? 0),
      at: targetAt[i]!,
    })),
    hasReturn: targets.some((h) => h.id === "return"),
  };
  data.editable = !state.readOnly;
  if (found.length > 0) {
    data.problem = worst(found);
    data.problemText = found.map((f) => f.message).join("\n");
  }
  if (state.diff?.nodes.added.includes(node.id)) data.change = "added";
  else if (state.diff?.nodes.changed.includes(node.id)) data.change = "changed";
  const position = state.dragging?.[node.id] ?? node.position;
  return { ...node, position, data, selected: state.selectedNodes.has(node.id), draggable: !state.readOnly, connectable: !state.readOnly };
}

function decorateEdge(edge: EditorEdge, state: CanvasState, found: Finding[]): EditorEdge {
  const classes = [edge.className ?? ""];
  if (found.length > 0) classes.push(`braid-edge--${worst(found)}`);
  const next: EditorEdge = {
    ...edge,
    className: classes.join(" ").trim(),
    selected: state.selectedEdges.has(edge.id),
    ariaLabel: `Edge from ${edge.source} to ${edge.target}${edge.label ? `, ${String(edge.label)}` : ""}`,
  };
  if (found.length > 0) next.label = `${worst(found) === "error" ? "✖ error" : "⚠ warning"} ${edge.label ?? ""}`.trim();
  return next;
}

/** The React Flow nodes and edges the editor draws for a document. */
export function editorCanvas(doc: GraphDocument, state: CanvasState): { nodes: EditorNode[]; edges: EditorEdge[] } {
  const base = toEditorFlow(doc, { actionOutcomes: state.actionOutcomes });
  const byNode = group(state.findings, (f) => f.node);
  const byEdge = group(state.findings, (f) => f.edge_index);
  const feeds = slotFeeds(doc);
  return {
    nodes: base.nodes.map((node) => decorateNode(node, state, feeds, byNode.get(node.id) ?? [])),
    edges: base.edges.map((edge) => decorateEdge(edge, state, byEdge.get(edge.data!.index) ?? [])),
  };
}
