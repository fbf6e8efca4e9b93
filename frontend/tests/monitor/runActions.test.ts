import { describe, expect, test } from "vitest";
import {
  actionBlocked,
  type BulkProgress,
  bulkBlocked,
  bulkResults,
  chunks,
  failedChunk,
  progressText,
  reasonProblem,
} from "../../src/monitor/runActions";

describe("when cancel and retry apply", () => {
  test("cancel applies to a live run and says why not for a finished one", () => {
    expect(["running", "waiting", "completed", "failed", "cancelled"].map((s) => actionBlocked("cancel", s))).toEqual([
      "",
      "",
      "The run completed: there is nothing left to cancel.",
      "The run failed: there is nothing left to cancel.",
      "The run was cancelled: there is nothing left to cancel.",
    ]);
  });

  test("retry applies only to a failed run", () => {
    expect(["failed", "waiting", "completed"].map((s) => actionBlocked("retry", s))).toEqual([
      "",
      "Only a failed run can be retried; this one is waiting.",
      "Only a failed run can be retried; this one is completed.",
    ]);
  });

  test("a bulk action is open when it applies to one selected run at least", () => {
    expect(bulkBlocked("cancel", [])).toBe("Select runs first.");
    expect(bulkBlocked("cancel", ["completed", "waiting"])).toBe("");
    expect(bulkBlocked("cancel", ["completed", "failed"])).toBe("Every selected run has finished: there is nothing to cancel.");
    expect(bulkBlocked("retry", ["completed", "failed"])).toBe("");
    expect(bulkBlocked("retry", ["waiting"])).toBe("Only failed runs can be retried, and none of the selected runs failed.");
  });
});

describe("the cancel reason", () => {
  test("is refused before sending when over 500 characters, counted as characters not code units", () => {
    expect(reasonProblem("x".repeat(500))).toBe("");
    expect(reasonProblem("😀".repeat(500))).toBe("");
    expect(reasonProblem("x".repeat(501))).toBe("The reason is 1 character over the limit of 500.");
    expect(reasonProblem("x".repeat(512))).toBe("The reason is 12 characters over the limit of 500.");
  });
});

describe("bulk results", () => {
  test("the server's per-run answers are read as they are", () => {
    const body = { action: "cancel", total: 2, done: 1, refused: 1, results: [
      { id: "a", ok: true, code: "", error: "" },
      { id: "b", ok: false, code: "run.finished", error: "the run is completed: nothing to cancel" },
    ] };
    expect(bulkResults(body)).toEqual(body.results);
    expect(() => bulkResults({ results: [{ id: 1, ok: true }] })).toThrow("A bulk result lacks its id or ok.");
    expect(() => bulkResults(null)).toThrow("The bulk answer has no results list.");
  });

  test("ids go out in requests of ten, in order", () => {
    const ids = Array.from({ length: 23 }, (_, index) => `r${index}`);
    expect(chunks(ids).map((part) => [part[0], part.length])).toEqual([["r0", 10], ["r10", 10], ["r20", 3]]);
  });

  test("the progress says done of total while it runs and what was refused after", () => {
    const running: BulkProgress = { action: "cancel", total: 45, results: failedChunk(["x"], "no").concat(
      Array.from({ length: 19 }, (_, index) => ({ id: `r${index}`, ok: true, code: "", error: "" }))), failure: "", finished: false };
    expect(progressText(running)).toBe("Cancelling: 20 of 45 runs answered…");
    expect(progressText({ ...running, total: 20, finished: true })).toBe("Cancel: 19 of 20 done, 1 refused.");
    expect(progressText({ action: "retry", total: 2, finished: true, failure: "", results: [
      { id: "a", ok: true, code: "", error: "" }, { id: "b", ok: true, code: "", error: "" }] })).toBe("Retry: 2 of 2 done.");
    expect(failedChunk(["a", "b"], "the request failed: The server answered 502.")).toEqual([
      { id: "a", ok: false, code: "request", error: "the request failed: The server answered 502." },
      { id: "b", ok: false, code: "request", error: "the request failed: The server answered 502." },
    ]);
  });
});
