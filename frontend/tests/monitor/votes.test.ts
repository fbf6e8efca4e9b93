import { expect, test } from "vitest";
import type { Vote } from "../../src/monitor/types";
import { shownVotes, voteVerdict, voteWho } from "../../src/monitor/votes";

const DANA: Vote = { user: "dana", groups: ["finance"], decision: "approve", comment: "fine", at: "2026-12-04T05:07:19Z" };

test("a vote reads Approved with the completed check or Rejected with the failed cross", () => {
  expect(voteVerdict(DANA)).toEqual({ text: "Approved", color: "completed" });
  expect(voteVerdict({ ...DANA, decision: "reject" })).toEqual({ text: "Rejected", color: "failed" });
});

test("the voter is named with the groups they decided for", () => {
  expect(voteWho(DANA)).toBe("dana (finance)");
  expect(voteWho({ ...DANA, user: "sam", groups: ["finance", "legal"] })).toBe("sam (finance, legal)");
  expect(voteWho({ ...DANA, groups: [] })).toBe("dana");
});

test("votes show only for a completed row: a row waiting again (a loop's next round) shows none", () => {
  expect(shownVotes("completed", [DANA])).toEqual([DANA]);
  expect(shownVotes("waiting", [DANA])).toEqual([]);
  expect(shownVotes(undefined, [DANA])).toEqual([]);
  expect(shownVotes("completed", undefined)).toEqual([]);
});
