import { describe, expect, test } from "vitest";
import { framePadding, frameViewport, liveNodeIds, liveToFrame, readableZoom, shownWhole } from "../../src/monitor/framing";

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

describe("which live nodes are framed", () => {
  const cards: Record<string, { x: number; y: number; width: number; height: number }> = {
    fin: { x: 0, y: 400, width: 220, height: 70 },
    legal: { x: 300, y: 400, width: 220, height: 70 },
  };
  const bounds = (ids: readonly string[]) => {
    const rects = ids.map((id) => cards[id]!);
    const left = Math.min(...rects.map((r) => r.x));
    const top = Math.min(...rects.map((r) => r.y));
    const right = Math.max(...rects.map((r) => r.x + r.width));
    const bottom = Math.max(...rects.map((r) => r.y + r.height));
    return { x: left, y: top, width: right - left, height: bottom - top };
  };

  test("all of them when they fit together at the zoom floor", () => {
    expect(liveToFrame(["fin", "legal"], bounds, DESKTOP, framePadding(DESKTOP.width), 1)).toEqual(["fin", "legal"]);
  });

  test("only the first when they do not, so one card shows whole (a phone's parallel approvals)", () => {
    // 520 px of cards at zoom 1 against 358 - 32 px of room.
    expect(liveToFrame(["fin", "legal"], bounds, PHONE, framePadding(PHONE.width), 1)).toEqual(["fin"]);
    expect(liveToFrame(["legal"], bounds, PHONE, framePadding(PHONE.width), 1)).toEqual(["legal"]);
    expect(liveToFrame([], bounds, PHONE, framePadding(PHONE.width), 1)).toEqual([]);
  });
});
