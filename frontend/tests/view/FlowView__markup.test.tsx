import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, test } from "vitest";
import { FlowError, FlowView } from "../../src/FlowView";
import { COLORS, colorClass, type GraphNode, NODE_TYPES, parseGraph } from "../../src/graph";
import { nodeTypes } from "../../src/nodes";

/** Server-render one node of the given config, alone in a graph. */
function renderNode(node: GraphNode, color?: (typeof COLORS)[number]): string {
  const doc = parseGraph({ format: "braid.graph/1", nodes: [node], edges: [] });
  return renderToStaticMarkup(<FlowView doc={doc} colors={color === undefined ? {} : { [node.id]: color }} />);
}

function nodeMarkup(markup: string): string {
  return markup.match(/<div class="braid-node [^"]*"[^>]*>.*?<\/div><\/div>/s)![0];
}

describe("nodeTypes", () => {
  test("has a component for each of the fifteen node types", () => {
    expect(Object.keys(nodeTypes).sort()).toEqual([...NODE_TYPES].sort());
  });

  test("every component is memoised", () => {
    const memo = Symbol.for("react.memo");
    expect(Object.values(nodeTypes).every((component) => component.$$typeof === memo)).toBe(true);
  });
});

describe("node markup", () => {
  test("markup in ids and titles is rendered as text, not HTML", () => {
    const markup = renderNode({
      id: "<img src=x onerror=alert(1)>",
      type: "approval",
      groups: ["finance"],
      policy: "any",
      title: "<script>alert(2)</script>",
    });
    expect(markup).toContain('<div class="braid-node__id">&lt;img src=x onerror=alert(1)&gt;</div>');
    expect(markup).toContain('<div class="braid-node__title">&lt;script&gt;alert(2)&lt;/script&gt;</div>');
    expect(markup).not.toContain("<img");
    expect(markup).not.toContain("<script");
  });

  test.each([
    ["start", "terminal", { top: false, bottom: true, right: false }],
    ["end", "terminal", { top: true, bottom: false, right: false }],
    ["task", "step", { top: true, bottom: true, right: false }],
    ["if", "decision", { top: true, bottom: true, right: false }],
    ["fork", "parallel", { top: true, bottom: true, right: false }],
    ["race", "parallel", { top: true, bottom: true, right: true }],
    ["foreach", "iteration", { top: true, bottom: true, right: true }],
    ["loop", "iteration", { top: true, bottom: true, right: true }],
    ["wait", "pause", { top: true, bottom: true, right: false }],
    ["subflow", "boundary", { top: true, bottom: true, right: false }],
    ["fail", "boundary", { top: true, bottom: false, right: false }],
  ] as const)("a %s node is drawn in the %s family with handles %o", (type, family, handles) => {
    const markup = nodeMarkup(renderNode({ id: "n", type } as GraphNode));
    expect(markup).toContain(`class="braid-node braid-node--${family} braid-node--${type}"`);
    expect({
      top: markup.includes('data-handlepos="top"'),
      bottom: markup.includes('data-handlepos="bottom"'),
      right: markup.includes('data-handlepos="right"'),
    }).toEqual(handles);
  });

  test.each(COLORS)("a %s node carries its color class and a text badge", (color) => {
    const markup = nodeMarkup(renderNode({ id: "n", type: "task", action: "noop" }, color));
    expect(markup).toContain(`class="braid-node braid-node--step braid-node--task ${colorClass(color)}"`);
    expect(markup).toMatch(new RegExp(`<span class="braid-node__status"><span aria-hidden="true">.</span> ${color}</span>`));
  });

  test("an uncolored graph shows no badges and no color key", () => {
    const markup = renderNode({ id: "n", type: "task", action: "noop" });
    expect([markup.includes("braid-node__status"), markup.includes("braid-legend")]).toEqual([false, false]);
  });
});

describe("FlowError", () => {
  test("renders the message as text in an alert", () => {
    expect(renderToStaticMarkup(<FlowError message={'Node "<b>" has unknown type "x".'} />)).toBe(
      '<div class="braid-flow-error" role="alert"><strong><span aria-hidden="true">⚠ </span>Cannot show this flow.</strong> ' +
        "Node &quot;&lt;b&gt;&quot; has unknown type &quot;x&quot;.</div>",
    );
  });
});

test("flow-view.css styles every color class", () => {
  const css = readFileSync(join(import.meta.dirname, "../../src/flow-view.css"), "utf8");
  expect(COLORS.filter((color) => !css.includes(`.${colorClass(color)} {`))).toEqual([]);
});
