import { describe, expect, test } from "vitest";
import {
  type BraidFlowNode,
  findBackEdges,
  type GraphDocument,
  LAYOUT_SPACING,
  NODE_WIDTH,
  parseGraph,
  type Point,
  ROUTED_EDGE,
  toFlow,
} from "../../src/graph";
import batchApproval from "../fixtures/batch-approval.json";
import pollLoop from "../fixtures/poll-loop.json";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

const batch = parseGraph(batchApproval);
const poll = parseGraph(pollLoop);

function positions(doc: GraphDocument): Record<string, Point> {
  return Object.fromEntries(toFlow(doc).nodes.map((node) => [node.id, node.position]));
}

/** Rank of each node: the index of its vertical center among the distinct centers. */
function ranks(doc: GraphDocument): Record<string, number> {
  const centers = toFlow(doc).nodes.map((node) => [node.id, node.position.y + node.height! / 2] as const);
  const levels = [...new Set(centers.map(([, y]) => y))].sort((a, b) => a - b);
  return Object.fromEntries(centers.map(([id, y]) => [id, levels.indexOf(y)]));
}

describe("findBackEdges", () => {
  test("finds the three returns of the batch foreach body", () => {
    expect([...findBackEdges(batch)].sort()).toEqual([5, 6, 7]);
  });

  test("finds the one return of the poll loop body", () => {
    expect([...findBackEdges(poll)]).toEqual([4]);
  });

  test("finds none in an acyclic flow", () => {
    expect(findBackEdges(invoiceSignoff).size).toBe(0);
  });
});

describe("automatic layout", () => {
  test("lays the batch flow out top to bottom in ranks that follow the forward edges", () => {
    expect(ranks(batch)).toEqual({ start: 0, lines: 1, big: 2, done: 2, review: 3, small: 3, ok: 4 });
  });

  test("lays the poll loop out top to bottom with its body below the loop", () => {
    expect(ranks(poll)).toEqual({ start: 0, poll: 1, check: 2, done: 2, count: 3, pause: 4 });
  });

  test("nodes of one rank do not overlap and keep the node separation", () => {
    const nodes = toFlow(batch).nodes;
    const byId = Object.fromEntries(nodes.map((node) => [node.id, node.position]));
    for (const [a, b] of [
      ["big", "done"],
      ["review", "small"],
    ] as const) {
      expect(Math.abs(byId[a]!.x - byId[b]!.x)).toBeGreaterThanOrEqual(NODE_WIDTH + LAYOUT_SPACING.nodesep);
    }
  });

  test("positions are whole pixels", () => {
    for (const { x, y } of Object.values(positions(batch))) {
      expect([Number.isInteger(x), Number.isInteger(y)]).toEqual([true, true]);
    }
  });

  test("the same document always gets the same layout", () => {
    expect(positions(batch)).toEqual(positions(parseGraph(structuredClone(batchApproval))));
  });
});

describe("designer positions", () => {
  test("a fully laid out document keeps every position exactly", () => {
    const layout = { start: { x: 10, y: 20 }, split: { x: 30, y: 140 }, fin: { x: -90, y: 260 },
      leg: { x: 150, y: 260 }, both: { x: 30, y: 380 }, done: { x: 30, y: 500 } };
    expect(positions({ ...invoiceSignoff, layout })).toEqual(layout);
  });

  test("unpositioned nodes follow dagre, shifted so the positioned node keeps its place", () => {
    const auto = positions({ ...batch, layout: {} });
    const start = auto.start!;
    const pinned = positions({ ...batch, layout: { start: { x: 500, y: 1000 } } });
    const shift = { x: 500 - start.x, y: 1000 - start.y };
    expect(pinned).toEqual(
      Object.fromEntries(Object.entries(auto).map(([id, p]) => [id, { x: p.x + shift.x, y: p.y + shift.y }])),
    );
  });

  test("the shift is the mean offset over several positioned nodes", () => {
    const auto = positions({ ...batch, layout: {} });
    const layout = {
      start: { x: auto.start!.x + 100, y: auto.start!.y },
      done: { x: auto.done!.x + 300, y: auto.done!.y + 40 },
    };
    const mixed = positions({ ...batch, layout });
    expect(mixed.start).toEqual(layout.start);
    expect(mixed.done).toEqual(layout.done);
    expect(mixed.ok).toEqual({ x: auto.ok!.x + 200, y: auto.ok!.y + 20 });
  });
});

describe("edge routes", () => {
  /** The node's box grown by `margin` px; rounding puts dagre's border points up to 1 px off. */
  function box(node: BraidFlowNode, margin: number) {
    return {
      left: node.position.x - margin,
      right: node.position.x + node.width! + margin,
      top: node.position.y - margin,
      bottom: node.position.y + node.height! + margin,
    };
  }

  function onBorder(point: Point, node: BraidFlowNode): boolean {
    const outer = box(node, 1);
    const inner = box(node, -1);
    const inOuter = point.x >= outer.left && point.x <= outer.right && point.y >= outer.top && point.y <= outer.bottom;
    const inInner = point.x > inner.left && point.x < inner.right && point.y > inner.top && point.y < inner.bottom;
    return inOuter && !inInner;
  }

  function insideAny(point: Point, nodes: BraidFlowNode[]): string[] {
    return nodes
      .filter((node) => {
        const b = box(node, 0);
        return point.x > b.left && point.x < b.right && point.y > b.top && point.y < b.bottom;
      })
      .map((node) => node.id);
  }

  const ifSkippingTwoRanks = parseGraph({
    format: "braid.graph/1",
    nodes: [
      { id: "start", type: "start" },
      { id: "check", type: "if", condition: "input.full" },
      { id: "fetch", type: "task", action: "http.request" },
      { id: "store", type: "set", values: { data: "state.body" } },
      { id: "done", type: "end" },
    ],
    edges: [
      { source: "start", target: "check" },
      { source: "check", target: "fetch", outcome: "true" },
      { source: "fetch", target: "store" },
      { source: "store", target: "done" },
      { source: "check", target: "done", outcome: "false" },
    ],
  });

  test.each([
    ["batch approval", batch],
    ["poll loop", poll],
    ["an if that skips two ranks", ifSkippingTwoRanks],
  ])("in the %s flow, each route runs border to border and never through a node", (_name, doc) => {
    const { nodes, edges } = toFlow(doc);
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const routed = edges.filter((edge) => edge.data?.route !== undefined);
    expect(routed.length).toBeGreaterThan(0);
    for (const edge of routed) {
      const route = edge.data!.route!;
      expect([onBorder(route[0]!, byId.get(edge.source)!), onBorder(route.at(-1)!, byId.get(edge.target)!)]).toEqual([
        true,
        true,
      ]);
      expect(route.slice(1, -1).flatMap((point) => insideAny(point, nodes))).toEqual([]);
    }
  });

  test("a forward edge that skips ranks is routed, with the dummy points between its ends", () => {
    const edges = toFlow(ifSkippingTwoRanks).edges;
    expect(edges.map((edge) => [edge.label ?? "", edge.type, (edge.data?.route?.length ?? 0) > 3])).toEqual([
      ["", "smoothstep", false],
      ["true", "smoothstep", false],
      ["", "smoothstep", false],
      ["", "smoothstep", false],
      ["false", ROUTED_EDGE, true],
    ]);
  });

  test("a back edge arriving under its loop stays out of the middle half of the loop's bottom", () => {
    for (const doc of [batch, poll]) {
      const { nodes, edges } = toFlow(doc);
      for (const edge of edges.filter((e) => e.data?.back)) {
        const loop = nodes.find((node) => node.id === edge.target)!;
        const arrival = edge.data!.route!.at(-1)!;
        const center = loop.position.x + loop.width! / 2;
        expect(Math.abs(arrival.x - center)).toBeGreaterThanOrEqual(loop.width! / 4 - 1);
      }
    }
  });
});
