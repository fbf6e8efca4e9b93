import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, test } from "vitest";
import { NODE_TYPES } from "../../src/graph/types";
import { NodeIcon } from "../../src/nodes/NodeIcon";

describe("NodeIcon", () => {
  test("draws each node kind as a decorative inline SVG with no text glyph", () => {
    for (const type of NODE_TYPES) {
      const markup = renderToStaticMarkup(<NodeIcon type={type} />);
      expect(markup).toMatch(
        new RegExp(
          `^<svg class="braid-node-icon" width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false" data-node-icon="${type}">`,
        ),
      );
      expect(markup.replace(/<[^>]*>/g, "")).toBe("");
      expect(markup).toMatch(/<(path|circle|rect) /);
    }
  });

  test("every kind has its own drawing", () => {
    const drawings = NODE_TYPES.map((type) =>
      renderToStaticMarkup(<NodeIcon type={type} />).replace(/ data-node-icon="[a-z]+"/, ""),
    );
    expect(new Set(drawings).size).toBe(NODE_TYPES.length);
    expect(NODE_TYPES.length).toBe(15);
  });

  test("takes a size", () => {
    expect(renderToStaticMarkup(<NodeIcon type="if" size={16} />)).toContain('width="16" height="16"');
  });
});
