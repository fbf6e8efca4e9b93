import { describe, expect, it } from "vitest";
import {
  type IssuedToken, curlExample, expiryText, lastUsedText, newTokenBody, revokeConsequence,
  withIssued, withoutToken,
} from "../../src/tokens/model";
import { token } from "./tokens";

const NOW = Date.parse("2026-12-06T12:00:00Z");

describe("a new token's body", () => {
  it("sends the trimmed name and the chosen number of days", () => {
    expect(newTokenBody("  nightly export ", "30", "", NOW)).toEqual({ body: { name: "nightly export", expires_in_days: 30 } });
    expect(newTokenBody("ci", "365", "", NOW)).toEqual({ body: { name: "ci", expires_in_days: 365 } });
  });

  it("sends no expiry for never, and a day as midnight UTC", () => {
    expect(newTokenBody("ci", "never", "2027-01-01", NOW)).toEqual({ body: { name: "ci" } });
    expect(newTokenBody("ci", "date", "2027-01-31", NOW)).toEqual({ body: { name: "ci", expires_at: "2027-01-31T00:00:00Z" } });
  });

  it("refuses a missing or long name, naming the field", () => {
    expect(newTokenBody("   ", "30", "", NOW)).toEqual({ problem: "Give the token a name, such as “nightly export”.", field: "name" });
    expect(newTokenBody("x".repeat(101), "30", "", NOW)).toEqual({ problem: "A name has at most 100 characters.", field: "name" });
    expect("body" in newTokenBody("é".repeat(100), "30", "", NOW)).toBe(true);
  });

  it("refuses a day that is missing, past, today or over ten years away", () => {
    expect(newTokenBody("ci", "date", "", NOW)).toEqual({ problem: "Pick the day the token stops working.", field: "date" });
    expect(newTokenBody("ci", "date", "2026-12-06", NOW)).toEqual({ problem: "Pick a day after today.", field: "date" });
    expect(newTokenBody("ci", "date", "2025-01-01", NOW)).toEqual({ problem: "Pick a day after today.", field: "date" });
    expect(newTokenBody("ci", "date", "2037-01-01", NOW)).toEqual({ problem: "Pick a day within ten years.", field: "date" });
    expect(newTokenBody("ci", "date", "2026-12-07", NOW)).toEqual({ body: { name: "ci", expires_at: "2026-12-07T00:00:00Z" } });
  });
});

describe("how a token reads", () => {
  it("says when it expires, or that it has", () => {
    expect(expiryText(token(), NOW)).toBe("never");
    expect(expiryText(token({ expires_at: "2026-12-09T12:00:00Z" }), NOW)).toBe("in 3 d");
    expect(expiryText(token({ expires_at: "2026-12-03T12:00:00Z", expired: true }), NOW)).toBe("expired 3 d ago");
    expect(expiryText(token({ expires_at: "2026-12-06T11:59:00Z", expired: false }), NOW)).toBe("expired 1 min ago");
  });

  it("says when it was last used", () => {
    expect(lastUsedText(token(), NOW)).toBe("never used");
    expect(lastUsedText(token({ last_used_at: "2026-12-06T11:57:00Z" }), NOW)).toBe("3 min ago");
  });

  it("names whose token a revoke stops", () => {
    expect(revokeConsequence(token(), "analyst")).toBe(
      "Every script using your token “nightly export” (braid_Ab3dE9fQ…) is refused from now on. This cannot be undone.",
    );
    expect(revokeConsequence(token(), "admin")).toContain("using analyst's token");
  });
});

describe("the list", () => {
  it("puts a new token on top without its secret", () => {
    const issued: IssuedToken = { ...token({ id: 9, name: "new" }), token: "braid_secret" };
    const list = withIssued([token()], issued);
    expect(list.map((t) => t.id)).toEqual([9, 3]);
    expect(JSON.stringify(list)).not.toContain("braid_secret");
    expect(withIssued(list, issued).map((t) => t.id)).toEqual([9, 3]);
  });

  it("drops a revoked token", () => {
    expect(withoutToken([token({ id: 1 }), token({ id: 2 })], 1).map((t) => t.id)).toEqual([2]);
  });

  it("shows a first call with the token", () => {
    expect(curlExample("http://127.0.0.1:8000", "braid_x")).toBe(
      'curl -H "Authorization: Bearer braid_x" http://127.0.0.1:8000/api/runs/?limit=1',
    );
  });
});
