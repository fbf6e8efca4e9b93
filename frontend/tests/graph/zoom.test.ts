import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { CANVAS_ZOOM_FLOOR, READABLE_PX, SMALLEST_CANVAS_FONT_PX, zoomFloor } from "../../src/graph";

const SRC = join(import.meta.dirname, "../../src");

/** Every `font-size: Npx` a style sheet sets, in pixels. */
function pixelFontSizes(path: string): number[] {
  const css = readFileSync(join(SRC, path), "utf8");
  return [...css.matchAll(/font-size:\s*([0-9.]+)px/g)].map((match) => Number(match[1]));
}

describe("zoomFloor", () => {
  test("text at the readable size itself may not be zoomed out at all", () => {
    expect(zoomFloor(12)).toBe(1);
  });

  test("larger text leaves room to zoom out until it reaches 12 px on screen", () => {
    expect(zoomFloor(16)).toBe(0.75);
    expect(zoomFloor(15)).toBe(0.8);
    expect(16 * zoomFloor(16)).toBe(12);
  });

  test("smaller text needs the canvas zoomed in to be readable", () => {
    expect(zoomFloor(10)).toBe(1.2);
    expect(zoomFloor(10.5) * 10.5).toBeCloseTo(12, 10);
  });

  test("another readable size may be asked for", () => {
    expect(zoomFloor(14, 7)).toBe(0.5);
  });

  test("a size that is not a positive number of pixels is refused with the value named", () => {
    expect(() => zoomFloor(0)).toThrow(new RangeError("the smallest font size must be a positive number of pixels, not 0"));
    expect(() => zoomFloor(-3)).toThrow(RangeError);
    expect(() => zoomFloor(Number.NaN)).toThrow("not NaN");
    expect(() => zoomFloor(12, 0)).toThrow(new RangeError("the readable size must be a positive number of pixels, not 0"));
  });
});

describe("the canvases' floor", () => {
  test("is the floor of the smallest canvas font at 12 px readable", () => {
    expect(READABLE_PX).toBe(12);
    expect(SMALLEST_CANVAS_FONT_PX).toBe(12);
    expect(CANVAS_ZOOM_FLOOR).toBe(1);
  });

  test("the flow view's style sheet sets no font size below the smallest canvas font", () => {
    expect(Math.min(...pixelFontSizes("flow-view.css"))).toBe(SMALLEST_CANVAS_FONT_PX);
  });
});
