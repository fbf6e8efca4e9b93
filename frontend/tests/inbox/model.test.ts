import { describe, expect, it } from "vitest";
import {
  NO_FILTERS, bulkSentence, dueText, groupByFlow, matches, move, outcomeOf, relative, valueText,
} from "../../src/inbox/model";
import { NOW, request } from "./requests";


describe("groupByFlow", () => {
  it("orders flows by their newest request and requests newest first", () => {
    const groups = groupByFlow([
      request(1, { flow: "a", created_at: "2026-12-04T10:00:00Z" }),
      request(2, { flow: "b", created_at: "2026-12-04T11:00:00Z" }),
      request(3, { flow: "a", created_at: "2026-12-04T11:30:00Z" }),
      request(4, { flow: null, created_at: "2026-12-04T09:00:00Z" }),
    ]);
    expect(groups.map((g) => [g.flow, g.requests.map((r) => r.id)])).toEqual([
      ["a", [3, 1]], ["b", [2]], ["(a file run)", [4]],
    ]);
  });
});

describe("matches", () => {
  const line = request(1, {
    title: "Line C: 30000", groups: ["finance", "legal"],
    shown: [{ field: "line.amount", value: 30000 }, { field: "line.vendor", value: "Acme" }],
    due_at: "2026-12-04T11:59:00Z",
  });

  it("searches the title, shown values and flow, every word", () => {
    expect(matches(line, { ...NO_FILTERS, search: "line acme" }, NOW)).toBe(true);
    expect(matches(line, { ...NO_FILTERS, search: "line globex" }, NOW)).toBe(false);
  });

  it("searches the run's input and its starter too", () => {
    const plain = request(2, {
      context: { ...line.context, input: [{ field: "vendor", text: "Globex" }], started_by: "dana" },
    });
    expect(matches(plain, { ...NO_FILTERS, search: "globex dana" }, NOW)).toBe(true);
    expect(matches(plain, { ...NO_FILTERS, search: "acme" }, NOW)).toBe(false);
  });

  it("filters by flow, group, due and a shown field's value", () => {
    expect(matches(line, { ...NO_FILTERS, flow: "invoice-sign-off" }, NOW)).toBe(true);
    expect(matches(line, { ...NO_FILTERS, flow: "other" }, NOW)).toBe(false);
    expect(matches(line, { ...NO_FILTERS, group: "legal" }, NOW)).toBe(true);
    expect(matches(line, { ...NO_FILTERS, group: "it" }, NOW)).toBe(false);
    expect(matches(line, { ...NO_FILTERS, due: "overdue" }, NOW)).toBe(true);
    expect(matches(line, { ...NO_FILTERS, due: "due" }, NOW)).toBe(false);
    expect(matches(line, { ...NO_FILTERS, due: "none" }, NOW)).toBe(false);
    expect(matches(request(2), { ...NO_FILTERS, due: "none" }, NOW)).toBe(true);
    expect(matches(line, { ...NO_FILTERS, field: "line.amount", fieldValue: "300" }, NOW)).toBe(true);
    expect(matches(line, { ...NO_FILTERS, field: "line.amount", fieldValue: "5" }, NOW)).toBe(false);
    expect(matches(line, { ...NO_FILTERS, field: "line.total" }, NOW)).toBe(false);
  });
});

describe("times and words", () => {
  it("says how long ago and how far a deadline is", () => {
    expect(relative("2026-12-04T11:57:00Z", NOW)).toBe("3 min ago");
    expect(relative("2026-12-04T11:59:30Z", NOW)).toBe("just now");
    expect(relative("2026-12-02T12:00:00Z", NOW)).toBe("2 days ago");
    expect(dueText(request(1, { due_at: "2026-12-04T14:00:00Z" }), NOW)).toBe("due in 2 hours");
    expect(dueText(request(1, { due_at: "2026-12-04T11:55:00Z" }), NOW)).toBe("overdue by 5 min");
    expect(dueText(request(1), NOW)).toBe("");
  });

  it("names outcomes, values and bulk results", () => {
    expect(outcomeOf(request(1, { outcome: "race deadline won by timer" }))).toEqual({
      kind: "cancelled", text: "Cancelled: race deadline won by timer",
    });
    expect(valueText({ a: 1 })).toBe('{"a":1}');
    expect(valueText("<b>")).toBe("<b>");
    expect(bulkSentence(3, 4)).toBe("3 of 4 done, 1 refused");
    expect(bulkSentence(4, 4)).toBe("4 of 4 done");
  });

  it("moves within the list without leaving it", () => {
    expect([move(0, -1, 3), move(2, 1, 3), move(1, 1, 3), move(0, 1, 0)]).toEqual([0, 2, 2, 0]);
  });
});
