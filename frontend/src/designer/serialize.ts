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
export type EditorEdgeData = { edge: GraphEdge; back: boolean; index: number; problem?: "error" | "warning" };
export type EditorNode = Node<EditorNodeData, NodeType>;
export type EditorEdge = Edge<EditorEdgeData>;

/** Pixels a node needs per handle, so that handle labels do not overlap. */
const HANDLE_PITCH = 64;
/** Extra height for the rows of handle labels above and below the text. */
const PORT_LABEL_ROOM = 30;

export interface EditorOptions {
  actionOutcomes?: Record<string, string[]>;
}

export function editorNodeSize(node: GraphNode, actionOutcomes: Record<string, string[]> = {}): Size {
  const handles = Math.max(sourceHandles(node, actionOutcomes).length, targetHandles(node).length);
  const width = Math.max(NODE_WIDTH, handles * HANDLE_PITCH);
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
