import { describe, expect, test } from "vitest";
import { COLOR_CUES, COLORS, colorClass, isColor } from "../../src/graph";

describe("colors", () => {
  test("there are the contract's seven colors in its order", () => {
    expect(COLORS).toEqual(["pending", "running", "waiting", "completed", "failed", "skipped", "cancelled"]);
  });

  test("each color has its own CSS class", () => {
    expect(COLORS.map(colorClass)).toEqual([
      "braid-color--pending",
      "braid-color--running",
      "braid-color--waiting",
      "braid-color--completed",
      "braid-color--failed",
      "braid-color--skipped",
      "braid-color--cancelled",
    ]);
  });

  test("each color has a distinct icon and its name as text, so hue is never the only cue", () => {
    expect(COLORS.map((color) => COLOR_CUES[color].text)).toEqual([...COLORS]);
    expect(new Set(COLORS.map((color) => COLOR_CUES[color].icon)).size).toBe(7);
  });

  test("isColor accepts the seven names and nothing else", () => {
    expect(COLORS.every(isColor)).toBe(true);
    expect([isColor("taken"), isColor("Completed"), isColor(""), isColor(null), isColor(3)]).toEqual([
      false, false, false, false, false,
    ]);
  });
});
