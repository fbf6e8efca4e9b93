import { describe, expect, test } from "vitest";
import { framePadding, frameViewport, liveNodeIds, readableZoom, shownWhole } from "../../src/monitor/framing";

const DESKTOP = { width: 1200, height: 700 };
const PHONE = { width: 358, height: 420 };

describe("what the run view frames", () => {
  test("the running and waiting nodes, in drawing order", () => {
    const colors = { start: "completed", a: "waiting", b: "running", c: "pending", d: "failed" };
    expect(liveNodeIds(colors, ["start", "b", "a", "c", "d", "gone"])).toEqual(["b", "a"]);
  });

  test("the zoom floor keeps the smallest canvas text at 12 px on screen", () => {
    expect(readableZoom(10.5)).toBeCloseTo(12 / 10.5, 10);
    expect(readableZoom(12)).toBe(1);
    expect(readableZoom(16)).toBe(0.75);
    expect(readableZoom(Number.POSITIVE_INFINITY)).toBe(1);
  });
});

describe("the viewport", () => {
  test("a small live area deep in the graph is centered at the largest zoom a fit allows", () => {
    const live = { x: 2000, y: 3000, width: 200, height: 80 };
    const view = frameViewport(live, DESKTOP, framePadding(DESKTOP.width), { min: 0.75, max: 1 }, "live");
    expect(view).toEqual({ x: 64 + (1200 - 244) / 2 - 2100, y: 32 + (700 - 64) / 2 - 3040, zoom: 1 });
    expect(shownWhole(live, view, DESKTOP)).toBe(true);
  });

  test("a live area too big for the canvas stops at the floor and keeps its center in view", () => {
    const live = { x: 0, y: 0, width: 3000, height: 2000 };
    const view = frameViewport(live, PHONE, framePadding(PHONE.width), { min: 1.2, max: 1 }, "live");
    expect(view.zoom).toBe(1.2);
    expect(view.x + 1500 * 1.2).toBeCloseTo(16 + (358 - 32) / 2, 10);
    expect(view.y + 1000 * 1.2).toBeCloseTo(24 + (420 - 48) / 2, 10);
  });

  test("a whole graph taller than the canvas at the floor shows its top, centered on the start node", () => {
    const graph = { x: -50, y: 10, width: 1600, height: 2400 };
    const view = frameViewport(graph, PHONE, framePadding(PHONE.width), { min: 1.1, max: 1 }, "whole", 300);
    expect(view).toEqual({ x: 16 + (358 - 32) / 2 - 300 * 1.1, y: 24 - 10 * 1.1, zoom: 1.1 });
  });

  test("a whole graph that fits is centered and not blown up past the fit's largest zoom", () => {
    const graph = { x: 0, y: 0, width: 400, height: 300 };
    const view = frameViewport(graph, DESKTOP, framePadding(DESKTOP.width), { min: 0.9, max: 1 }, "whole", 200);
    expect(view.zoom).toBe(1);
    expect(shownWhole(graph, view, DESKTOP)).toBe(true);
  });
});
