import { describe, expect, test } from "vitest";
import { middlePoint, smoothPath } from "../../src/graph";

describe("smoothPath", () => {
  test.each([
    [[], ""],
    [[{ x: 0, y: 0 }], "M0,0"],
    [[{ x: 0, y: 0 }, { x: 10, y: 0 }], "M0,0 L10,0"],
    [[{ x: 0, y: 0 }, { x: 10, y: 0 }, { x: 10, y: 10 }], "M0,0 L5,0 Q10,0 10,5 L10,10"],
    [
      [{ x: 0, y: 0 }, { x: 0, y: 20 }, { x: 20, y: 20 }, { x: 20, y: 40 }],
      "M0,0 L0,10 Q0,20 10,20 L10,20 Q20,20 20,30 L20,40",
    ],
  ])("draws %j as %j", (points, path) => {
    expect(smoothPath(points)).toBe(path);
  });
});

describe("middlePoint", () => {
  test.each([
    [[{ x: 0, y: 0 }, { x: 5, y: 5 }, { x: 9, y: 9 }], { x: 5, y: 5 }],
    [[{ x: 0, y: 0 }, { x: 5, y: 5 }], { x: 5, y: 5 }],
    [[], { x: 0, y: 0 }],
  ])("of %j is %j", (points, point) => {
    expect(middlePoint(points)).toEqual(point);
  });
});
