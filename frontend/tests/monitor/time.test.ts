import { describe, expect, test } from "vitest";
import { absoluteTime, durationText, relativeTime } from "../../src/monitor/time";

const NOW = Date.parse("2026-12-04T12:00:00Z");

describe("relativeTime", () => {
  test.each([
    ["2026-12-04T11:59:58Z", "just now"],
    ["2026-12-04T11:59:18Z", "42 s ago"],
    ["2026-12-04T11:57:00Z", "3 min ago"],
    ["2026-12-04T09:00:00Z", "3 h ago"],
    ["2026-11-29T12:00:00Z", "5 d ago"],
    ["2026-09-04T12:00:00Z", "3 mo ago"],
    ["2024-12-04T12:00:00Z", "2 y ago"],
    ["2026-12-04T14:00:00Z", "in 2 h"],
  ])("%s reads %s", (iso, text) => {
    expect(relativeTime(iso, NOW)).toBe(text);
  });

  test("a time that does not parse says so", () => {
    expect(relativeTime("yesterday", NOW)).toBe("unknown time");
  });
});

test("the absolute time is UTC to the second", () => {
  expect(absoluteTime("2026-12-04T05:07:19.981959+00:00")).toBe("2026-12-04 05:07:19 UTC");
  expect(absoluteTime("not a time")).toBe("not a time");
});

test("durations read in the largest sensible units", () => {
  expect([durationText(420), durationText(12_000), durationText(184_000), durationText(7_500_000)]).toEqual([
    "0.4 s",
    "12 s",
    "3 min 4 s",
    "2 h 5 min",
  ]);
});
