import { describe, expect, test } from "vitest";
import {
  NODE_HEIGHT,
  NODE_WIDTH,
  parseGraph,
  RETURN_HANDLE,
  ROUTED_EDGE,
  TITLED_NODE_HEIGHT,
  toFlow,
} from "../../src/graph";
import batchApproval from "../fixtures/batch-approval.json";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

const batch = parseGraph(batchApproval);

describe("toFlow nodes", () => {
  test("each node becomes a flow node of its own type with the id and a kind summary", () => {
    const { nodes } = toFlow(batch);
    expect(nodes.map((node) => [node.id, node.type, node.data])).toEqual([
      ["start", "start", { label: "start", kind: "start", summary: "start" }],
      ["lines", "foreach", { label: "lines", kind: "foreach", summary: "foreach · line in input.lines" }],
      ["big", "if", { label: "big", kind: "if", summary: "if · line.amount > 10000" }],
      [
        "review",
        "approval",
        {
          label: "review",
          kind: "approval",
          summary: "approval · finance · any",
          title: "Line ${line.id}: ${line.amount}",
        },
      ],
      ["ok", "set", { label: "ok", kind: "set", summary: "set · approved" }],
      ["small", "set", { label: "small", kind: "set", summary: "set · auto" }],
      ["done", "end", { label: "done", kind: "end", summary: "end" }],
    ]);
  });

  test("an approval with a title is taller than the other nodes", () => {
    const sizes = toFlow(batch).nodes.map((node) => [node.id, node.width, node.height]);
    expect(sizes).toEqual([
      ["start", NODE_WIDTH, NODE_HEIGHT],
      ["lines", NODE_WIDTH, NODE_HEIGHT],
      ["big", NODE_WIDTH, NODE_HEIGHT],
      ["review", NODE_WIDTH, TITLED_NODE_HEIGHT],
      ["ok", NODE_WIDTH, NODE_HEIGHT],
      ["small", NODE_WIDTH, NODE_HEIGHT],
      ["done", NODE_WIDTH, NODE_HEIGHT],
    ]);
  });

  test("colors are copied onto the nodes they name and into their aria labels", () => {
    const { nodes } = toFlow(batch, { start: "completed", lines: "running", review: "waiting" });
    expect(nodes.map((node) => [node.id, node.data.color, node.ariaLabel])).toEqual([
      ["start", "completed", "start: start, completed"],
      ["lines", "running", "lines: foreach · line in input.lines, running"],
      ["big", undefined, "big: if · line.amount > 10000"],
      ["review", "waiting", "review: approval · finance · any, waiting"],
      ["ok", undefined, "ok: set · approved"],
      ["small", undefined, "small: set · auto"],
      ["done", undefined, "done: end"],
    ]);
  });
});

describe("toFlow edges", () => {
  test("an edge is labelled with its outcome or branch and its slot", () => {
    const { edges } = toFlow(invoiceSignoff);
    expect(edges.map((edge) => [edge.id, edge.source, edge.target, edge.label])).toEqual([
      ["e0:start->split", "start", "split", undefined],
      ["e1:split->fin", "split", "fin", "finance"],
      ["e2:split->leg", "split", "leg", "legal"],
      ["e3:fin->both", "fin", "both", "approved · slot finance"],
      ["e4:leg->both", "leg", "both", "approved · slot legal"],
      ["e5:both->done", "both", "done", undefined],
    ]);
  });

  test("edge data keeps outcome, branch and slot as the document gave them", () => {
    const { edges } = toFlow(invoiceSignoff);
    expect(edges.map((edge) => edge.data)).toEqual([
      { back: false },
      { back: false, branch: "finance" },
      { back: false, branch: "legal" },
      { back: false, outcome: "approved", slot: "finance" },
      { back: false, outcome: "approved", slot: "legal" },
      { back: false },
    ]);
  });

  test("a body's returns to its foreach are back edges entering the return handle", () => {
    const { edges } = toFlow(batch);
    expect(edges.map((edge) => [edge.id, edge.label, edge.data?.back, edge.targetHandle, edge.className])).toEqual([
      ["e0:start->lines", undefined, false, undefined, undefined],
      ["e1:lines->big", "item", false, undefined, undefined],
      ["e2:big->review", "true", false, undefined, undefined],
      ["e3:big->small", "false", false, undefined, undefined],
      ["e4:review->ok", "approved", false, undefined, undefined],
      ["e5:review->lines", "rejected", true, RETURN_HANDLE, "braid-edge--back"],
      ["e6:ok->lines", undefined, true, RETURN_HANDLE, "braid-edge--back"],
      ["e7:small->lines", undefined, true, RETURN_HANDLE, "braid-edge--back"],
      ["e8:lines->done", "done", false, undefined, undefined],
    ]);
  });

  test("an edge id from the document is kept", () => {
    const doc = parseGraph({
      format: "braid.graph/1",
      nodes: [
        { id: "start", type: "start" },
        { id: "done", type: "end" },
      ],
      edges: [{ id: "go", source: "start", target: "done" }],
    });
    expect(toFlow(doc).edges.map((edge) => edge.id)).toEqual(["go"]);
  });

  test("with an automatic layout, back edges follow dagre's route and one-rank edges are smoothstep", () => {
    const { edges } = toFlow(batch);
    expect(edges.map((edge) => [edge.id, edge.type, edge.data?.route === undefined])).toEqual([
      ["e0:start->lines", "smoothstep", true],
      ["e1:lines->big", "smoothstep", true],
      ["e2:big->review", "smoothstep", true],
      ["e3:big->small", "smoothstep", true],
      ["e4:review->ok", "smoothstep", true],
      ["e5:review->lines", ROUTED_EDGE, false],
      ["e6:ok->lines", ROUTED_EDGE, false],
      ["e7:small->lines", ROUTED_EDGE, false],
      ["e8:lines->done", "smoothstep", true],
    ]);
  });

  test("with designer positions, every edge is smoothstep and has no route", () => {
    const pinned = { ...batch, layout: { start: { x: 0, y: 0 } } };
    const { edges } = toFlow(pinned);
    expect(edges.map((edge) => [edge.type, edge.data?.route])).toEqual(
      Array.from({ length: 9 }, () => ["smoothstep", undefined]),
    );
  });
});
