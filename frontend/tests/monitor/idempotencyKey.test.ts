import { describe, expect, it } from "vitest";
import { idempotencyKey } from "../../src/monitor/api";

describe("idempotencyKey", () => {
  it("is 32 hex digits, as the API takes (1 to 255 visible ASCII characters)", () => {
    expect(idempotencyKey()).toMatch(/^[0-9a-f]{32}$/);
  });

  it("is new each time", () => {
    const keys = new Set(Array.from({ length: 1000 }, () => idempotencyKey()));
    expect(keys.size).toBe(1000);
  });
});
