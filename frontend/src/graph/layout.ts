/** Node positions and edge routes: designer positions first, dagre for the rest. */

import { Graph, layout as dagreLayout } from "@dagrejs/dagre";
import type { GraphDocument, Point } from "./types";

export interface Size {
  width: number;
  height: number;
}

/** Spacing of the automatic layout, in pixels. */
export const LAYOUT_SPACING = { nodesep: 48, ranksep: 64, edgesep: 24 } as const;

/**
 * Return the indices of the edges that close a cycle, found by depth-first
 * search from `start` (then from any node not yet reached) in document order.
 * For a valid flow these are exactly the bodies' returns to their
 * foreach/loop/race.
 */
export function findBackEdges(doc: GraphDocument): Set<number> {
  const outgoing = new Map<string, number[]>(doc.nodes.map((node) => [node.id, []]));
  doc.edges.forEach((edge, index) => outgoing.get(edge.source)?.push(index));

  const state = new Map<string, "open" | "done">();
  const backEdges = new Set<number>();
  const visit = (root: string): void => {
    // Iterative DFS: each stack entry is a node and the position of its next edge.
    const stack: [string, number][] = [[root, 0]];
    state.set(root, "open");
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [nodeId, next] = top;
      const edges = outgoing.get(nodeId) ?? [];
      if (next >= edges.length) {
        state.set(nodeId, "done");
        stack.pop();
        continue;
      }
      top[1] = next + 1;
      const edgeIndex = edges[next]!;
      const target = doc.edges[edgeIndex]!.target;
      const seen = state.get(target);
      if (seen === "open") {
        backEdges.add(edgeIndex);
      } else if (seen === undefined) {
        state.set(target, "open");
        stack.push([target, 0]);
      }
    }
  };

  const roots = [...doc.nodes].sort((a, b) => Number(b.type === "start") - Number(a.type === "start"));
  for (const node of roots) {
    if (!state.has(node.id)) {
      visit(node.id);
    }
  }
  return backEdges;
}

export interface Layout {
  /** Top-left position of every node. */
  positions: Map<string, Point>;
  /**
   * Dagre's route, in the edge's own direction, for each edge that needs one:
   * a back edge, or a forward edge that spans more than one rank. Empty when
   * any node has a designer position, since dagre's routes do not fit those.
   */
  routes: Map<number, Point[]>;
}

type DagreGraph = InstanceType<typeof Graph>;

/**
 * Run dagre top to bottom. Back edges go in reversed, so that they rank like
 * the forward edges and dagre routes them around the body instead of across it.
 */
function runDagre(doc: GraphDocument, sizes: ReadonlyMap<string, Size>, backEdges: ReadonlySet<number>): DagreGraph {
  const graph = new Graph({ multigraph: true });
  graph.setGraph({ rankdir: "TB", marginx: 0, marginy: 0, ...LAYOUT_SPACING });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of doc.nodes) {
    graph.setNode(node.id, { ...sizes.get(node.id)! });
  }
  doc.edges.forEach((edge, index) => {
    const [from, to] = backEdges.has(index) ? [edge.target, edge.source] : [edge.source, edge.target];
    graph.setEdge(from, to, {}, String(index));
  });
  dagreLayout(graph);
  return graph;
}

function roundPoint({ x, y }: Point): Point {
  return { x: Math.round(x), y: Math.round(y) };
}

function dagrePositions(doc: GraphDocument, graph: DagreGraph): Map<string, Point> {
  const positions = new Map<string, Point>();
  for (const node of doc.nodes) {
    const { x = 0, y = 0, width, height } = graph.node(node.id) as Size & Partial<Point>;
    positions.set(node.id, roundPoint({ x: x - width / 2, y: y - height / 2 }));
  }
  return positions;
}

/** A one-rank edge has three points (both ends and the middle); more means dummy nodes. */
const ONE_RANK_POINTS = 3;

/**
 * Move a back edge's arrival off the middle of its target's bottom side,
 * where the target's own outgoing edges leave, to a quarter of its width
 * towards the side the route comes from.
 */
function keepArrivalClear(route: Point[], target: Size & Point): void {
  const last = route[route.length - 1];
  const before = route[route.length - 2];
  if (last === undefined || before === undefined) {
    return;
  }
  const quarter = target.width / 4;
  const onBottom = Math.abs(last.y - (target.y + target.height / 2)) <= 1;
  if (onBottom && Math.abs(last.x - target.x) < quarter) {
    last.x = Math.round(target.x + (before.x < target.x ? -quarter : quarter));
  }
}

function dagreRoutes(doc: GraphDocument, graph: DagreGraph, backEdges: ReadonlySet<number>): Map<number, Point[]> {
  const routes = new Map<number, Point[]>();
  doc.edges.forEach((edge, index) => {
    const back = backEdges.has(index);
    const [from, to] = back ? [edge.target, edge.source] : [edge.source, edge.target];
    const points = (graph.edge(from, to, String(index)) as { points?: Point[] }).points ?? [];
    if (back || points.length > ONE_RANK_POINTS) {
      const route = points.map(roundPoint);
      if (back) {
        route.reverse();
        keepArrivalClear(route, graph.node(edge.target) as Size & Point);
      }
      routes.set(index, route);
    }
  });
  return routes;
}

/**
 * Return each node's top-left position and dagre's edge routes. Nodes with a
 * `layout` entry keep it; the others take dagre's position, shifted by the
 * mean offset between dagre and the designer over the positioned nodes, so
 * that a partly laid out graph stays in one coordinate frame.
 */
export function layoutGraph(
  doc: GraphDocument,
  sizes: ReadonlyMap<string, Size>,
  backEdges: ReadonlySet<number> = findBackEdges(doc),
): Layout {
  const given = doc.layout ?? {};
  const pinned = doc.nodes.filter((node) => Object.hasOwn(given, node.id));
  if (pinned.length === doc.nodes.length) {
    const positions = new Map(pinned.map((node) => [node.id, { x: given[node.id]!.x, y: given[node.id]!.y }]));
    return { positions, routes: new Map() };
  }

  const graph = runDagre(doc, sizes, backEdges);
  const automatic = dagrePositions(doc, graph);
  if (pinned.length === 0) {
    return { positions: automatic, routes: dagreRoutes(doc, graph, backEdges) };
  }

  let dx = 0;
  let dy = 0;
  for (const node of pinned) {
    dx += given[node.id]!.x - automatic.get(node.id)!.x;
    dy += given[node.id]!.y - automatic.get(node.id)!.y;
  }
  const shift = { x: Math.round(dx / pinned.length), y: Math.round(dy / pinned.length) };
  const positions = new Map(
    doc.nodes.map((node) => {
      const designed = given[node.id];
      const auto = automatic.get(node.id)!;
      return [node.id, designed === undefined ? { x: auto.x + shift.x, y: auto.y + shift.y } : { x: designed.x, y: designed.y }];
    }),
  );
  return { positions, routes: new Map() };
}
