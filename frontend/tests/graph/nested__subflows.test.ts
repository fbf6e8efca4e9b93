import { describe, expect, test } from "vitest";
import {
  allPaths,
  AUTO_EXPAND_NODES,
  CLOSED_SUBFLOW_HEIGHT,
  FRAME_HEADING,
  FRAME_PADDING,
  frameSize,
  type GraphDocument,
  layoutBlock,
  NODE_HEIGHT,
  NODE_WIDTH,
  nodeAtPath,
  parseGraph,
  toNestedFlow,
} from "../../src/graph";

const line = (id: string, middle: object): GraphDocument =>
  parseGraph({
    format: "braid.graph/1",
    name: id,
    nodes: [{ id: "start", type: "start" }, middle, { id: "done", type: "end" }],
    edges: [
      { source: "start", target: (middle as { id: string }).id },
      { source: (middle as { id: string }).id, target: "done" },
    ],
  });

// main: start -> assess (calls risk@latest) -> done; risk: start -> inner (calls score@2) -> done;
// score: start -> compute -> done.
const MAIN = line("main", { id: "assess", type: "subflow", flow: "risk" });
const GRAPHS: Record<string, GraphDocument> = {
  main: MAIN,
  "risk@latest": line("risk", { id: "inner", type: "subflow", flow: "score", version: 2 }),
  "score@2": line("score", { id: "compute", type: "set", values: { score: "1" } }),
};

describe("subflows drawn inside their nodes", () => {
  test("child nodes follow their parent, keyed by path, with parentId set, nested twice", () => {
    const { nodes } = toNestedFlow(layoutBlock(MAIN, GRAPHS, new Set()));
    expect(nodes.map((node) => [node.id, node.parentId, node.data.label, node.data.path])).toEqual([
      ["start", undefined, "start", undefined],
      ["assess", undefined, "assess", undefined],
      ["assess/start", "assess", "start", "assess/start"],
      ["assess/inner", "assess", "inner", "assess/inner"],
      ["assess/inner/start", "assess/inner", "start", "assess/inner/start"],
      ["assess/inner/compute", "assess/inner", "compute", "assess/inner/compute"],
      ["assess/inner/done", "assess/inner", "done", "assess/inner/done"],
      ["assess/done", "assess", "done", "assess/done"],
      ["done", undefined, "done", undefined],
    ]);
    expect(nodes.filter((node) => node.parentId !== undefined).every((node) => node.extent === "parent")).toBe(true);
  });

  test("a frame is sized to its child graph plus padding and heading, and children sit inside it", () => {
    const { nodes } = toNestedFlow(layoutBlock(MAIN, GRAPHS, new Set()));
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const innermostHeight = 3 * NODE_HEIGHT + 2 * 64; // three ranks, ranksep 64
    const inner = byId.get("assess/inner")!;
    expect([inner.width, inner.height]).toEqual([NODE_WIDTH + 2 * FRAME_PADDING, innermostHeight + FRAME_HEADING + FRAME_PADDING]);
    const assess = byId.get("assess")!;
    expect(assess.width).toBe(inner.width! + 2 * FRAME_PADDING);
    expect(assess.height).toBe(2 * NODE_HEIGHT + 2 * 64 + inner.height! + FRAME_HEADING + FRAME_PADDING);
    // The innermost start node: padding plus heading from its frame's corner.
    expect(byId.get("assess/inner/start")!.position).toEqual({ x: FRAME_PADDING, y: FRAME_HEADING });
    expect(byId.get("assess/start")!.position.y).toBe(FRAME_HEADING);
    for (const node of nodes.filter((n) => n.parentId !== undefined)) {
      const parent = byId.get(node.parentId!)!;
      expect(node.position.x + node.width!).toBeLessThanOrEqual(parent.width!);
      expect(node.position.y + node.height!).toBeLessThanOrEqual(parent.height!);
    }
    expect(assess.data.subflow).toEqual({ steps: 3, expanded: true });
    expect(byId.get("start")!.data.subflow).toBeUndefined();
  });

  test("colors and reasons are read by path, and child edges are keyed and faded by path", () => {
    const colors = { start: "completed", assess: "running", "assess/start": "completed", "assess/inner": "pending" } as const;
    const { nodes, edges } = toNestedFlow(layoutBlock(MAIN, GRAPHS, new Set()), colors, {
      "assess/inner": "pending: not reached yet",
    });
    const byId = new Map(nodes.map((node) => [node.id, node]));
    expect(byId.get("assess/start")!.data.color).toBe("completed");
    expect(byId.get("assess/inner")!.data.reason).toBe("pending: not reached yet");
    expect(byId.get("assess/inner")!.ariaLabel).toBe("assess/inner: subflow · score v2, pending: not reached yet");
    expect(edges.map((edge) => [edge.id, edge.source, edge.target, edge.className])).toEqual([
      ["e0:start->assess", "start", "assess", "braid-edge--taken"],
      ["e1:assess->done", "assess", "done", "braid-edge--untaken"],
      ["assess/e0:start->inner", "assess/start", "assess/inner", "braid-edge--untaken"],
      ["assess/e1:inner->done", "assess/inner", "assess/done", "braid-edge--untaken"],
      ["assess/inner/e0:start->compute", "assess/inner/start", "assess/inner/compute", "braid-edge--untaken"],
      ["assess/inner/e1:compute->done", "assess/inner/compute", "assess/inner/done", "braid-edge--untaken"],
    ]);
  });

  test("a toggled subflow is drawn closed: a plain node that says how many steps it hides", () => {
    const { nodes } = toNestedFlow(layoutBlock(MAIN, GRAPHS, new Set(["assess/inner"])));
    expect(nodes.map((node) => node.id)).toEqual(["start", "assess", "assess/start", "assess/inner", "assess/done", "done"]);
    const inner = nodes.find((node) => node.id === "assess/inner")!;
    expect([inner.width, inner.height, inner.data.subflow]).toEqual([NODE_WIDTH, CLOSED_SUBFLOW_HEIGHT, { steps: 3, expanded: false }]);
    const closed = toNestedFlow(layoutBlock(MAIN, GRAPHS, new Set(["assess"]))).nodes;
    expect(closed.map((node) => node.id)).toEqual(["start", "assess", "done"]);
  });

  test("a large child graph starts closed and opens when toggled", () => {
    const many = Array.from({ length: AUTO_EXPAND_NODES }, (_, i) => ({ id: `s${i}`, type: "set", values: {} }));
    const big = parseGraph({
      format: "braid.graph/1",
      nodes: [{ id: "start", type: "start" }, ...many, { id: "done", type: "end" }],
      edges: [
        { source: "start", target: "s0" },
        ...many.slice(1).map((node, i) => ({ source: `s${i}`, target: node.id })),
        { source: `s${AUTO_EXPAND_NODES - 1}`, target: "done" },
      ],
    });
    const graphs = { main: MAIN, "risk@latest": big };
    expect(toNestedFlow(layoutBlock(MAIN, graphs, new Set())).nodes.find((n) => n.id === "assess")!.data.subflow).toEqual({
      steps: AUTO_EXPAND_NODES + 2,
      expanded: false,
    });
    expect(toNestedFlow(layoutBlock(MAIN, graphs, new Set(["assess"]))).nodes).toHaveLength(3 + AUTO_EXPAND_NODES + 2);
  });

  test("a subflow whose graph the run does not hold is a plain node", () => {
    const { nodes } = toNestedFlow(layoutBlock(MAIN, { main: MAIN }, new Set()));
    expect(nodes.map((node) => [node.id, node.width, node.height, node.data.subflow])).toEqual([
      ["start", NODE_WIDTH, NODE_HEIGHT, undefined],
      ["assess", NODE_WIDTH, NODE_HEIGHT, undefined],
      ["done", NODE_WIDTH, NODE_HEIGHT, undefined],
    ]);
  });

  test("a graph that calls itself is drawn once, not forever", () => {
    const selfish = line("selfish", { id: "again", type: "subflow", flow: "selfish" });
    const { nodes } = toNestedFlow(layoutBlock(MAIN, { main: MAIN, "risk@latest": selfish, "selfish@latest": selfish }, new Set()));
    expect(nodes.map((node) => node.id)).toEqual([
      "start",
      "assess",
      "assess/start",
      "assess/again",
      "assess/again/start",
      "assess/again/again",
      "assess/again/done",
      "assess/done",
      "done",
    ]);
  });

  test("a frame is never narrower than a node", () => {
    expect(frameSize({ width: 10, height: 5 })).toEqual({ width: NODE_WIDTH, height: 5 + FRAME_HEADING + FRAME_PADDING });
  });
});

describe("paths of a run's graphs", () => {
  test("every path, subflow children included", () => {
    expect(allPaths(MAIN, GRAPHS)).toEqual([
      "start",
      "assess",
      "done",
      "assess/start",
      "assess/inner",
      "assess/done",
      "assess/inner/start",
      "assess/inner/compute",
      "assess/inner/done",
    ]);
  });

  test("a path names its node in the graph its subflow calls", () => {
    expect(nodeAtPath(MAIN, GRAPHS, "assess/inner/compute")).toEqual({
      doc: GRAPHS["score@2"],
      node: { id: "compute", type: "set", values: { score: "1" } },
    });
    expect(nodeAtPath(MAIN, GRAPHS, "assess")!.node.type).toBe("subflow");
    expect(nodeAtPath(MAIN, GRAPHS, "assess/nothing")).toBeNull();
    expect(nodeAtPath(MAIN, GRAPHS, "start/x")).toBeNull();
  });
});
