import { describe, expect, test } from "vitest";
import { reasonParts, reasonPlain } from "../../src/graph";

const text = (value: string) => ({ code: false, text: value });
const code = (value: string) => ({ code: true, text: value });

describe("reasonParts", () => {
  test("each backticked node id is a code part between the plain words", () => {
    expect(reasonParts("Not taken: `big` chose `false`")).toEqual([
      text("Not taken: "),
      code("big"),
      text(" chose "),
      code("false"),
    ]);
  });

  test("a reason that starts and ends with code has no empty plain parts", () => {
    expect(reasonParts("`a``b`")).toEqual([code("a"), code("b")]);
  });

  test("a reason without backticks is one plain part, and an empty reason has none", () => {
    expect(reasonParts('Approved by finance (dana): "fine"')).toEqual([text('Approved by finance (dana): "fine"')]);
    expect(reasonParts("")).toEqual([]);
  });

  test("an unbalanced backtick stays in the plain text as written", () => {
    expect(reasonParts("Skipped: `boom failed")).toEqual([text("Skipped: `boom failed")]);
    expect(reasonParts("`a` then `b")).toEqual([code("a"), text(" then `b")]);
    expect(reasonParts("ends with a tick`")).toEqual([text("ends with a tick`")]);
  });

  test("an empty pair is not code: it stays as two backticks", () => {
    expect(reasonParts("empty `` pair")).toEqual([text("empty `` pair")]);
    expect(reasonParts("``x`")).toEqual([text("`"), code("x")]);
  });

  test("HTML-looking text stays text, inside code and out", () => {
    expect(reasonParts('Rejected by finance (eve): "<img src=x onerror=alert(1)>" at `<b>fin</b>`')).toEqual([
      text('Rejected by finance (eve): "<img src=x onerror=alert(1)>" at '),
      code("<b>fin</b>"),
    ]);
  });
});

describe("reasonPlain", () => {
  test("drops the backticks of code spans and keeps every other character", () => {
    expect(reasonPlain("Cancelled: race `deadline` was won by `decision` while waiting for its timer")).toBe(
      "Cancelled: race deadline was won by decision while waiting for its timer",
    );
    expect(reasonPlain("`a` then `b")).toBe("a then `b");
    expect(reasonPlain("empty `` pair <i>x</i>")).toBe("empty `` pair <i>x</i>");
  });
});
