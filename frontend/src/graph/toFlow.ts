/**
 * `braid.graph/1` document -> React Flow nodes and edges.
 *
 * Only types come from @xyflow/react (erased at build time), so this module
 * stays free of React and can be tested in plain Node.
 */

import type { Edge, Node } from "@xyflow/react";
import type { Color, ColorMap } from "./colors";
import { findBackEdges, layoutGraph, type Size } from "./layout";
import { edgeLabel, kindSummary } from "./summary";
import { reasonPlain } from "./reason";
import { type GraphDocument, type GraphNode, type NodeType, type Point, RETURN_TARGET_TYPES } from "./types";

export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 56;
/** Approval nodes carry a third line: their title. */
export const TITLED_NODE_HEIGHT = 74;

/** The target handle on foreach/loop/race nodes that a body's back edge enters. */
export const RETURN_HANDLE = "return";

/** Edge type drawn along dagre's route (`data.route`); the others are smoothstep. */
export const ROUTED_EDGE = "routed";

/** A handle the designer draws on a node (the read-only views draw none of these). */
export type NodePort = {
  id: string;
  label: string;
  /** Target ports: how many edges arrive (more than one into a gather slot means OR). */
  feeds?: number;
  /** Where along its side the handle sits, 0..1 (spread evenly when absent). */
  at?: number;
};

export type BraidNodeData = {
  /** The node id, shown as the node's heading. */
  label: string;
  kind: NodeType;
  /** Type plus key config, e.g. `approval · finance · any`. */
  summary: string;
  /** An approval's title template, shown raw (`${…}` is interpolated at run time). */
  title?: string;
  color?: Color;
  /** Why the node has its color (the monitor's walk), shown in a tooltip and read on focus. */
  reason?: string;
  /** The node's path when it sits inside a subflow (`pay/charge`); absent in the top graph. */
  path?: string;
  /** A subflow node whose child graph is known: how many steps it has and whether they are drawn inside it. */
  subflow?: { steps: number; expanded: boolean };
  /** Designer only: labelled handles per outcome/branch (bottom) and per slot/input (top). */
  ports?: { sources: NodePort[]; targets: NodePort[]; hasReturn: boolean };
  /** Designer only: handles accept connections. */
  editable?: boolean;
  /** Designer only: the worst validation finding on the node, and its messages. */
  problem?: "error" | "warning";
  problemText?: string;
  /** Designer only: how a compared version differs from the draft at this node. */
  change?: "added" | "removed" | "changed";
};

export type BraidEdgeData = {
  outcome?: string;
  branch?: string;
  slot?: string;
  /** True for an edge that closes a cycle (a body returning to its loop). */
  back: boolean;
  /** Dagre's route in flow coordinates, source end first, when the layout is automatic. */
  route?: Point[];
};

export type BraidFlowNode = Node<BraidNodeData, NodeType>;
export type BraidFlowEdge = Edge<BraidEdgeData>;

export interface Flow {
  nodes: BraidFlowNode[];
  edges: BraidFlowEdge[];
}

function nodeTitle(node: GraphNode): string | undefined {
  return node.type === "approval" && typeof node.title === "string" && node.title !== ""
    ? node.title
    : undefined;
}

function nodeSize(node: GraphNode): Size {
  return { width: NODE_WIDTH, height: nodeTitle(node) === undefined ? NODE_HEIGHT : TITLED_NODE_HEIGHT };
}

/** Reasons keyed like ColorMap: why each node has its color. */
export type ReasonMap = Readonly<Record<string, string>>;

function nodeData(node: GraphNode, color: Color | undefined, reason?: string): BraidNodeData {
  const data: BraidNodeData = { label: node.id, kind: node.type, summary: kindSummary(node) };
  const title = nodeTitle(node);
  if (title !== undefined) {
    data.title = title;
  }
  if (color !== undefined) {
    data.color = color;
  }
  if (reason !== undefined && reason !== "") {
    data.reason = reason;
  }
  return data;
}

function flowNodes(
  doc: GraphDocument,
  colors: ColorMap,
  sizes: ReadonlyMap<string, Size>,
  positions: ReadonlyMap<string, Point>,
  reasons: ReasonMap,
  prefix: string,
): BraidFlowNode[] {
  return doc.nodes.map((node) => {
    const path = prefix + node.id;
    const data = nodeData(node, colors[path], reasons[path]);
    if (prefix !== "") data.path = path;
    const state =
      data.color === undefined ? "" : data.reason === undefined ? `, ${data.color}` : `, ${reasonPlain(data.reason)}`;
    return {
      id: path,
      type: node.type,
      position: positions.get(node.id)!,
      ...sizes.get(node.id)!,
      data,
      ariaLabel: `${path}: ${data.summary}${state}`,
    };
  });
}

function edgeData(doc: GraphDocument, index: number, back: boolean, route: Point[] | undefined): BraidEdgeData {
  const { outcome, branch, slot } = doc.edges[index]!;
  const data: BraidEdgeData = { back };
  if (outcome !== undefined) data.outcome = outcome;
  if (branch !== undefined) data.branch = branch;
  if (slot !== undefined) data.slot = slot;
  if (route !== undefined) data.route = route;
  return data;
}

const TAKEN: ReadonlySet<Color | undefined> = new Set<Color | undefined>(["running", "waiting", "completed", "failed"]);

/** A colored graph's edge is taken when both its ends were taken (UI.md: others fade). */
function edgeTaken(colors: ColorMap, source: string, target: string): boolean {
  return TAKEN.has(colors[source]) && TAKEN.has(colors[target]);
}

function flowEdges(
  doc: GraphDocument,
  backEdges: ReadonlySet<number>,
  routes: ReadonlyMap<number, Point[]>,
  colors: ColorMap,
  prefix: string,
): BraidFlowEdge[] {
  const colored = Object.keys(colors).length > 0;
  const typeOf = new Map(doc.nodes.map((node) => [node.id, node.type]));
  return doc.edges.map((edge, index) => {
    const back = backEdges.has(index);
    const label = edgeLabel(edge);
    const route = routes.get(index);
    const flowEdge: BraidFlowEdge = {
      id: prefix + (edge.id ?? `e${index}:${edge.source}->${edge.target}`),
      source: prefix + edge.source,
      target: prefix + edge.target,
      type: route === undefined ? "smoothstep" : ROUTED_EDGE,
      data: edgeData(doc, index, back, route),
    };
    if (label !== "") {
      flowEdge.label = label;
    }
    const classes: string[] = [];
    if (colored) {
      classes.push(
        edgeTaken(colors, prefix + edge.source, prefix + edge.target) ? "braid-edge--taken" : "braid-edge--untaken",
      );
    }
    if (back) {
      classes.push("braid-edge--back");
      if (RETURN_TARGET_TYPES.has(typeOf.get(edge.target)!)) {
        flowEdge.targetHandle = RETURN_HANDLE;
      }
    }
    if (classes.length > 0) {
      flowEdge.className = classes.join(" ");
    }
    return flowEdge;
  });
}

/** Where every node and edge goes: computed once per document, reused across recolorings. */
export interface FlowLayout {
  backEdges: ReadonlySet<number>;
  sizes: ReadonlyMap<string, Size>;
  positions: ReadonlyMap<string, Point>;
  routes: ReadonlyMap<number, Point[]>;
}

/**
 * Lay a document out (dagre, or its own layout) without coloring it. `sizeOf` overrides
 * some nodes' sizes (a subflow drawn with its child graph inside); designer positions
 * leave no room for such a node, so a document with overrides is laid out by dagre.
 */
export function layoutOf(doc: GraphDocument, sizeOf: ReadonlyMap<string, Size> = new Map()): FlowLayout {
  const backEdges = findBackEdges(doc);
  const sizes = new Map(doc.nodes.map((node) => [node.id, sizeOf.get(node.id) ?? nodeSize(node)]));
  const placed = sizeOf.size === 0 ? doc : withoutDesignerLayout(doc);
  const { positions, routes } = layoutGraph(placed, sizes, backEdges);
  return { backEdges, sizes, positions, routes };
}

function withoutDesignerLayout(doc: GraphDocument): GraphDocument {
  const copy = { ...doc };
  delete copy.layout;
  return copy;
}

/**
 * Convert a document (and optional `{path: color}` and `{path: reason}`) into React Flow
 * nodes and edges. `prefix` (`pay/`) draws a subflow's child graph: ids, colors and
 * reasons are then keyed by the child's node paths.
 */
export function toFlow(
  doc: GraphDocument,
  colors: ColorMap = {},
  reasons: ReasonMap = {},
  layout: FlowLayout = layoutOf(doc),
  prefix = "",
): Flow {
  const { backEdges, sizes, positions, routes } = layout;
  return {
    nodes: flowNodes(doc, colors, sizes, positions, reasons, prefix),
    edges: flowEdges(doc, backEdges, routes, colors, prefix),
  };
}
