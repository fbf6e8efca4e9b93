import { describe, expect, test } from "vitest";
import { NO_FILTERS, parseSearch, runsQuery } from "../../src/monitor/runsQuery";

describe("parseSearch", () => {
  test("state=field:value is a state filter", () => {
    expect(parseSearch(" state=decision:approved ")).toEqual({ kind: "state", condition: "decision:approved" });
  });
  test("a whole uuid is a run id, in lower case", () => {
    expect(parseSearch("17B161D6-E3CD-4249-A2E0-E94994938592")).toEqual({
      kind: "id",
      id: "17b161d6-e3cd-4249-a2e0-e94994938592",
    });
  });
  test("the first characters of an id are a prefix", () => {
    expect(parseSearch("17b161d6")).toEqual({ kind: "idPrefix", prefix: "17b161d6" });
  });
  test("anything else is explained", () => {
    expect(parseSearch("state=no colon").kind).toBe("invalid");
    expect(parseSearch("hello world")).toEqual({
      kind: "invalid",
      message: "Search by a run id (or its first characters) or by state=field:value.",
    });
    expect(parseSearch("")).toEqual({ kind: "none" });
  });
});

test("filters become the API's query parameters; days become whole-day bounds", () => {
  const params = runsQuery(
    {
      ...NO_FILTERS,
      flow: "vendor-payment",
      status: "failed",
      startedBy: " admin ",
      createdAfter: "2026-12-01",
      createdBefore: "2026-12-04",
    },
    { kind: "state", condition: "risk:120" },
  );
  expect(Object.fromEntries(params)).toEqual({
    flow: "vendor-payment",
    status: "failed",
    started_by: "admin",
    created_after: "2026-12-01T00:00:00Z",
    created_before: "2026-12-04T23:59:59.999999Z",
    state: "risk:120",
  });
});

test("waiting on me is the API's own filter and keeps the status filter", () => {
  const params = runsQuery({ ...NO_FILTERS, status: "waiting", waitingOnMe: true }, { kind: "none" });
  expect(params.toString()).toBe("status=waiting&waiting_on_me=true");
});
