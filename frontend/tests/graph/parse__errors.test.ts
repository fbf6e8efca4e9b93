import { describe, expect, test } from "vitest";
import { GraphFormatError, parseColors, parseGraph, parseJsonText } from "../../src/graph";
import batchApproval from "../fixtures/batch-approval.json";

const NODES = [
  { id: "start", type: "start" },
  { id: "done", type: "end" },
];

function graphError(value: unknown): string {
  try {
    parseGraph(value);
  } catch (error) {
    expect(error).toBeInstanceOf(GraphFormatError);
    return (error as Error).message;
  }
  throw new Error("parseGraph accepted the document");
}

describe("parseGraph", () => {
  test("accepts the batch approval example and returns it unchanged", () => {
    expect(parseGraph(batchApproval)).toBe(batchApproval);
  });

  test.each([
    ["a list", [], "The graph must be a JSON object."],
    ["null", null, "The graph must be a JSON object."],
    ["another format", { format: "braid.graph/2", nodes: [], edges: [] },
      'The graph\'s format is "braid.graph/2", expected "braid.graph/1".'],
    ["no format", { nodes: [], edges: [] }, 'The graph\'s format is undefined, expected "braid.graph/1".'],
    ["a non-string name", { format: "braid.graph/1", name: 3, nodes: [], edges: [] }, '"name" must be a string.'],
    ["no nodes", { format: "braid.graph/1", edges: [] }, '"nodes" must be an array.'],
    ["a node that is not an object", { format: "braid.graph/1", nodes: ["start"], edges: [] },
      "nodes[0] must be an object."],
    ["a node without id", { format: "braid.graph/1", nodes: [{ type: "start" }], edges: [] },
      'nodes[0] needs a non-empty string "id".'],
    ["an unknown node type", { format: "braid.graph/1", nodes: [{ id: "x", type: "script" }], edges: [] },
      'Node "x" has unknown type "script".'],
    ["a duplicate id", { format: "braid.graph/1", nodes: [...NODES, { id: "done", type: "fail" }], edges: [] },
      'Node id "done" is used twice.'],
    ["no edges", { format: "braid.graph/1", nodes: NODES }, '"edges" must be an array.'],
    ["an edge to an unknown node", { format: "braid.graph/1", nodes: NODES,
      edges: [{ source: "start", target: "nowhere" }] },
      'edges[0] has target "nowhere", which is not a node id.'],
    ["an edge without source", { format: "braid.graph/1", nodes: NODES, edges: [{ target: "done" }] },
      "edges[0] has source undefined, which is not a node id."],
    ["a numeric outcome", { format: "braid.graph/1", nodes: NODES,
      edges: [{ source: "start", target: "done", outcome: 1 }] },
      'edges[0] field "outcome" must be a string.'],
    ["a layout point without y", { format: "braid.graph/1", nodes: NODES, edges: [],
      layout: { start: { x: 1 } } },
      'layout["start"] must be {"x": number, "y": number}.'],
    ["a layout that is a list", { format: "braid.graph/1", nodes: NODES, edges: [], layout: [] },
      '"layout" must be an object of {"x", "y"} points.'],
  ])("rejects %s", (_what, value, message) => {
    expect(graphError(value)).toBe(message);
  });

  test("ignores layout entries for nodes that no longer exist", () => {
    const doc = { format: "braid.graph/1", nodes: NODES, edges: [], layout: { gone: { x: 1, y: 2 } } };
    expect(parseGraph(doc).nodes.map((node) => node.id)).toEqual(["start", "done"]);
  });
});

describe("parseJsonText", () => {
  test("parses JSON", () => {
    expect(parseJsonText('{"a": [1]}', "The graph")).toEqual({ a: [1] });
  });

  test("names the source of JSON that does not parse", () => {
    expect(() => parseJsonText("{nodes:", "The JSON in #flow-graph")).toThrow(
      /^The JSON in #flow-graph is not valid JSON \(.+\)\.$/,
    );
  });
});

describe("parseColors", () => {
  test("accepts a map of node ids to colors", () => {
    expect(parseColors({ start: "completed", "sub/inner": "skipped" })).toEqual({
      start: "completed",
      "sub/inner": "skipped",
    });
  });

  test.each([
    [[], "The colors must be a JSON object of {nodeId: color}."],
    [{ start: "green" }, 'Node "start" has unknown color "green".'],
    [{ start: null }, 'Node "start" has unknown color null.'],
  ])("rejects %j", (value, message) => {
    expect(() => parseColors(value)).toThrow(new GraphFormatError(message));
  });
});
