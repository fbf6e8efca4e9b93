/**
 * Document ⇄ React Flow, for the editor. Each React Flow node carries its
 * graph node object and each edge its graph edge object, untouched, so
 * `fromEditorFlow(doc, toEditorFlow(doc))` is the same JSON as `doc` with
 * the positions written into `layout`.
 *
 * Only types come from @xyflow/react, so this stays testable in plain Node.
 */

import type { Edge, Node } from "@xyflow/react";
import { findBackEdges, layoutGraph, type Size } from "../graph/layout";
import { edgeLabel, kindSummary } from "../graph/summary";
import { type BraidNodeData, NODE_HEIGHT, NODE_WIDTH, TITLED_NODE_HEIGHT } from "../graph/toFlow";
import type { GraphDocument, GraphEdge, GraphNode, NodeType, Point } from "../graph/types";
import { edgeSourceHandle, edgeTargetHandle, sourceHandles, targetHandles } from "./handles";

export type EditorNodeData = BraidNodeData & { node: GraphNode };
export type EditorEdgeData = {
  edge: GraphEdge;
  back: boolean;
  index: number;
  /** A return's vertical lane (flow x), right of every node it passes. */
  lane?: number;
};

/** Edge type of a return (the component lives in src/edges/ReturnEdge.tsx). */
export const RETURN_EDGE_TYPE = "return";
/** Space between a return's lane and the nodes it passes. */
const LANE_GAP = 36;
export type EditorNode = Node<EditorNodeData, NodeType>;
export type EditorEdge = Edge<EditorEdgeData>;

/** Pixels a node needs per handle, so that handle labels do not overlap. */
const HANDLE_PITCH = 64;
/** Width of one character of a 12 px handle label, generously. */
const LABEL_CHAR = 7.5;
/** Extra height for the rows of handle labels above and below the text. */
const PORT_LABEL_ROOM = 38;

export interface EditorOptions {
  actionOutcomes?: Record<string, string[]>;
}

/** The room one handle's label needs along a node's side. */
function labelRoom(label: string): number {
  return Math.max(HANDLE_PITCH, label.length * LABEL_CHAR + 24);
}

/**
 * Where each handle of a row sits along a side of `width`, as a fraction:
 * every label gets its own room, and the rows are centred.
 */
export function portFractions(labels: readonly string[], width: number): number[] {
  const rooms = labels.map(labelRoom);
  const total = rooms.reduce((sum, room) => sum + room, 0);
  let at = (width - total) / 2;
  return rooms.map((room) => {
    const centre = at + room / 2;
    at += room;
    return centre / width;
  });
}

/** The labels of a node's source and target handle rows (the return handle is on the side). */
export function portLabels(node: GraphNode, actionOutcomes: Record<string, string[]> = {}): { sources: string[]; targets: string[] } {
  return {
    sources: sourceHandles(node, actionOutcomes).map((h) => h.label),
    targets: targetHandles(node)
      .filter((h) => h.id !== "return")
      .map((h) => h.label),
  };
}

export function editorNodeSize(node: GraphNode, actionOutcomes: Record<string, string[]> = {}): Size {
  const { sources, targets } = portLabels(node, actionOutcomes);
  const row = (labels: string[]) => labels.reduce((sum, label) => sum + labelRoom(label), 0);
  const width = Math.max(NODE_WIDTH, row(sources) + 16, row(targets) + 16);
  const titled = node.type === "approval" && typeof node.title === "string" && node.title !== "";
  return { width, height: (titled ? TITLED_NODE_HEIGHT : NODE_HEIGHT) + PORT_LABEL_ROOM };
}

/** Positions for every node: the document's layout, dagre for nodes it lacks. */
export function editorPositions(doc: GraphDocument, options: EditorOptions = {}): Map<string, Point> {
  const sizes = new Map(doc.nodes.map((node) => [node.id, editorNodeSize(node, options.actionOutcomes)]));
  return layoutGraph(doc, sizes).positions;
}

/** Stable React Flow ids for the edges (a document edge rarely has its own id). */
export function editorEdgeIds(doc: GraphDocument): string[] {
  const seen = new Map<string, number>();
  return doc.edges.map((edge) => {
    if (typeof edge.id === "string" && edge.id !== "") return `id:${edge.id}`;
    const base = `${edge.source}/${edge.branch !== undefined ? `b:${edge.branch}` : `o:${edge.outcome ?? "next"}`}->${edge.target}${edge.slot !== undefined ? `/s:${edge.slot}` : ""}`;
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}#${count + 1}`;
  });
}

export function toEditorFlow(doc: GraphDocument, options: EditorOptions = {}): { nodes: EditorNode[]; edges: EditorEdge[] } {
  const positions = editorPositions(doc, options);
  const back = findBackEdges(doc);
  const byId = new Map(doc.nodes.map((node) => [node.id, node]));
  const nodes = doc.nodes.map((node): EditorNode => {
    const data: EditorNodeData = { label: node.id, kind: node.type, summary: kindSummary(node), node };
    if (node.type === "approval" && typeof node.title === "string" && node.title !== "") data.title = node.title;
    return {
      id: node.id,
      type: node.type,
      position: positions.get(node.id) ?? { x: 0, y: 0 },
      ...editorNodeSize(node, options.actionOutcomes),
      data,
      ariaLabel: `${node.id}: ${data.summary}`,
    };
  });
  const ids = editorEdgeIds(doc);
  const boxes = new Map(nodes.map((node) => [node.id, { ...node.position, width: node.width!, height: node.height! }]));
  /** The x right of every node between the return's ends (vertically), target included. */
  const laneOf = (edge: GraphEdge): number => {
    const from = boxes.get(edge.source)!;
    const to = boxes.get(edge.target)!;
    const top = Math.min(to.y, from.y);
    const bottom = Math.max(to.y + to.height, from.y + from.height) + 18;
    let right = Math.max(from.x + from.width, to.x + to.width);
    for (const box of boxes.values()) {
      if (box.y < bottom && box.y + box.height > top) right = Math.max(right, box.x + box.width);
    }
    return right + LANE_GAP;
  };
  const edges = doc.edges.map((edge, index): EditorEdge => {
    const isBack = back.has(index);
    const label = edgeLabel(edge);
    const flowEdge: EditorEdge = {
      id: ids[index]!,
      source: edge.source,
      target: edge.target,
      sourceHandle: edgeSourceHandle(edge),
      targetHandle: edgeTargetHandle(edge, byId.get(edge.target), isBack),
      type: "smoothstep",
      data: { edge, back: isBack, index },
    };
    // Outcomes, branches and slots are labelled on the handles; a return says so on the edge.
    if (isBack) {
      flowEdge.className = "braid-edge--back";
      if (flowEdge.targetHandle === "return") {
        flowEdge.type = RETURN_EDGE_TYPE;
        flowEdge.data!.lane = laneOf(edge);
      }
      flowEdge.label = label === "" ? "↩ return" : `↩ ${label}`;
    }
    return flowEdge;
  });
  return { nodes, edges };
}

/**
 * React Flow nodes and edges -> document: the graph objects they carry, in
 * their order, with the positions as `layout`; every other top-level member
 * of `base` (format, name, state, input, …) is kept as it is.
 */
export function fromEditorFlow(
  base: GraphDocument,
  flow: { nodes: readonly EditorNode[]; edges: readonly EditorEdge[] },
): GraphDocument {
  const layout: Record<string, Point> = {};
  for (const node of flow.nodes) layout[node.id] = { x: Math.round(node.position.x), y: Math.round(node.position.y) };
  const doc: GraphDocument = {
    ...base,
    nodes: flow.nodes.map((node) => node.data.node),
    edges: flow.edges.map((edge) => edge.data!.edge),
  };
  doc.layout = layout;
  return doc;
}

/** The document without `layout`, for comparisons where positions do not count. */
export function withoutLayout(doc: GraphDocument): Omit<GraphDocument, "layout"> {
  const { layout: _layout, ...rest } = doc;
  return rest;
}
