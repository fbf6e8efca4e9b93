/**
 * A run's graph with its subflows' child graphs drawn inside their subflow nodes.
 *
 * A run executes several documents, keyed like the engine's `subflow_key`: `main` and
 * `<flow slug>@<version or "latest">`. A subflow node `pay` calls one of them, and its
 * child nodes have the paths `pay/<child>` (CONTRACT §3). An expanded subflow node
 * becomes a React Flow group: its child graph is laid out on its own, the node grows to
 * frame it, and the child nodes carry `parentId` so they move with it. Nested subflows
 * nest the same way. Pure: no React, no DOM.
 */

import type { ColorMap } from "./colors";
import type { Size } from "./layout";
import {
  type BraidFlowEdge,
  type BraidFlowNode,
  type Flow,
  type FlowLayout,
  layoutOf,
  NODE_WIDTH,
  type ReasonMap,
  TITLED_NODE_HEIGHT,
  toFlow,
} from "./toFlow";
import type { GraphDocument, Point, SubflowNode } from "./types";

/** The key of the top graph among a run's graphs. */
export const MAIN_GRAPH = "main";
/** A child graph of up to this many nodes starts drawn inside its subflow node. */
export const AUTO_EXPAND_NODES = 12;
/** Room around a child graph inside its frame, and above it for the frame's heading. */
export const FRAME_PADDING = 20;
export const FRAME_HEADING = 80;
/** A closed subflow node with a known child graph has a third line: its "show n steps" button. */
export const CLOSED_SUBFLOW_HEIGHT = TITLED_NODE_HEIGHT;
/** Subflows nest at most this deep on the canvas (the engine refuses deeper calls anyway). */
const MAX_DEPTH = 8;

/** Return the graph key a subflow node calls (the engine's `subflow_key`). */
export function subflowKey(node: SubflowNode): string {
  return `${node.flow}@${node.version ?? "latest"}`;
}

/** Return whether the subflow at `path` is drawn open: small ones by default, flipped by `toggled`. */
export function isExpanded(path: string, steps: number, toggled: ReadonlySet<string>): boolean {
  return (steps <= AUTO_EXPAND_NODES) !== toggled.has(path);
}

/** One laid-out graph: its document, where it sits in the run (`prefix`), and its open subflows. */
export interface Block {
  doc: GraphDocument;
  prefix: string;
  layout: FlowLayout;
  /** Subtracted from the layout's positions so that the block starts at (0, 0). */
  shift: Point;
  size: Size;
  /** Open subflows by node id. */
  children: ReadonlyMap<string, Block>;
  /** Subflow nodes whose child graph is known, with its node count (open or not). */
  steps: ReadonlyMap<string, number>;
}

function childGraphs(
  doc: GraphDocument,
  graphs: Readonly<Record<string, GraphDocument>>,
  chain: readonly string[],
): [SubflowNode, string, GraphDocument][] {
  const found: [SubflowNode, string, GraphDocument][] = [];
  for (const node of doc.nodes) {
    if (node.type !== "subflow") continue;
    const key = subflowKey(node);
    const child = graphs[key];
    // A key already on the chain would recurse forever; the engine refuses such flows.
    if (child !== undefined && !chain.includes(key)) found.push([node, key, child]);
  }
  return found;
}

function bounds(layout: FlowLayout): { shift: Point; size: Size } {
  let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [id, point] of layout.positions) {
    const size = layout.sizes.get(id)!;
    minX = Math.min(minX, point.x);
    minY = Math.min(minY, point.y);
    maxX = Math.max(maxX, point.x + size.width);
    maxY = Math.max(maxY, point.y + size.height);
  }
  if (minX === Infinity) return { shift: { x: 0, y: 0 }, size: { width: 0, height: 0 } };
  return { shift: { x: minX, y: minY }, size: { width: maxX - minX, height: maxY - minY } };
}

/** Return the size of a subflow node framing a child block. */
export function frameSize(child: Size): Size {
  return {
    width: Math.max(NODE_WIDTH, child.width + 2 * FRAME_PADDING),
    height: child.height + FRAME_HEADING + FRAME_PADDING,
  };
}

/** Lay out `doc` at `prefix`, its open subflows first (inside out) so that each frame fits its child. */
export function layoutBlock(
  doc: GraphDocument,
  graphs: Readonly<Record<string, GraphDocument>>,
  toggled: ReadonlySet<string>,
  prefix = "",
  chain: readonly string[] = [MAIN_GRAPH],
): Block {
  const children = new Map<string, Block>();
  const steps = new Map<string, number>();
  const sizes = new Map<string, Size>();
  for (const [node, key, child] of childGraphs(doc, graphs, chain)) {
    steps.set(node.id, child.nodes.length);
    const path = prefix + node.id;
    if (chain.length > MAX_DEPTH || !isExpanded(path, child.nodes.length, toggled)) {
      sizes.set(node.id, { width: NODE_WIDTH, height: CLOSED_SUBFLOW_HEIGHT });
      continue;
    }
    const block = layoutBlock(child, graphs, toggled, `${path}/`, [...chain, key]);
    children.set(node.id, block);
    sizes.set(node.id, frameSize(block.size));
  }
  const layout = layoutOf(doc, sizes);
  return { doc, prefix, layout, ...bounds(layout), children, steps };
}

function moved(point: Point, by: Point): Point {
  return { x: point.x + by.x, y: point.y + by.y };
}

/**
 * Return the block's nodes (each frame just before its children: React Flow needs parents first) and
 * edges. Node positions are relative to the block's frame, or absolute for the top block;
 * `origin` is where the block's (0, 0) is in the flow, for dagre's routes, which are
 * absolute.
 */
function drawBlock(block: Block, colors: ColorMap, reasons: ReasonMap, origin: Point, top: boolean): Flow {
  const shift = top ? { x: 0, y: 0 } : block.shift;
  const flow = toFlow(block.doc, colors, reasons, block.layout, block.prefix);
  const offset = { x: origin.x - shift.x, y: origin.y - shift.y };
  const nodes: BraidFlowNode[] = [];
  const edges: BraidFlowEdge[] = flow.edges.map((edge) =>
    edge.data?.route === undefined ? edge : { ...edge, data: { ...edge.data, route: edge.data.route.map((p) => moved(p, offset)) } },
  );
  for (const node of flow.nodes) {
    const id = node.id.slice(block.prefix.length);
    const position = top ? node.position : moved(node.position, { x: -shift.x, y: -shift.y });
    const count = block.steps.get(id);
    const child = block.children.get(id);
    const data = count === undefined ? node.data : { ...node.data, subflow: { steps: count, expanded: child !== undefined } };
    nodes.push({ ...node, position, data });
    if (child === undefined) continue;
    // Inside the frame, below its heading; a frame widened to its heading centers a narrow child graph.
    const spare = (frameSize(child.size).width - 2 * FRAME_PADDING - child.size.width) / 2;
    const inset = { x: FRAME_PADDING + spare, y: FRAME_HEADING };
    const drawn = drawBlock(child, colors, reasons, moved(moved(position, origin), inset), false);
    const framed = drawn.nodes.map((childNode) =>
      childNode.parentId !== undefined
        ? childNode
        : { ...childNode, parentId: node.id, extent: "parent" as const, position: moved(childNode.position, inset) },
    );
    // Right after their frame: Tab then walks a subflow's steps before the nodes after it.
    nodes.push(...framed);
    edges.push(...drawn.edges);
  }
  return { nodes, edges };
}

/** Return the React Flow nodes and edges of a laid-out run graph, colored by node path. */
export function toNestedFlow(block: Block, colors: ColorMap = {}, reasons: ReasonMap = {}): Flow {
  return drawBlock(block, colors, reasons, { x: 0, y: 0 }, true);
}

/** Return every node path of the run's graphs, subflow children included (open or not). */
export function allPaths(
  doc: GraphDocument,
  graphs: Readonly<Record<string, GraphDocument>>,
  prefix = "",
  chain: readonly string[] = [MAIN_GRAPH],
): string[] {
  const paths = doc.nodes.map((node) => prefix + node.id);
  if (chain.length > MAX_DEPTH) return paths;
  for (const [node, key, child] of childGraphs(doc, graphs, chain)) {
    paths.push(...allPaths(child, graphs, `${prefix}${node.id}/`, [...chain, key]));
  }
  return paths;
}

/** Return the document and node a path names (`pay/charge` inside the graph `pay` calls), or null. */
export function nodeAtPath(
  doc: GraphDocument,
  graphs: Readonly<Record<string, GraphDocument>>,
  path: string,
): { doc: GraphDocument; node: GraphDocument["nodes"][number] } | null {
  const [head, ...rest] = path.split("/");
  const node = doc.nodes.find((candidate) => candidate.id === head);
  if (node === undefined) return null;
  if (rest.length === 0) return { doc, node };
  if (node.type !== "subflow") return null;
  const child = graphs[subflowKey(node)];
  return child === undefined ? null : nodeAtPath(child, graphs, rest.join("/"));
}
