import { describe, expect, it } from "vitest";
import {
  currentList, type InboxAction, inboxReducer, type InboxState, initialInboxState, PAGE,
} from "../../src/inbox/inboxState";
import { NO_FILTERS } from "../../src/inbox/model";
import { NOW, request } from "./requests";


function run(state: InboxState, ...actions: InboxAction[]): InboxState {
  return actions.reduce(inboxReducer, state);
}

const START = initialInboxState({ activeId: null, now: NOW });
const LOADED = run(START, { type: "loaded", which: "open", results: [request(1), request(2), request(3)], count: 3 });

describe("the inbox's initial state", () => {
  it("opens on the open tab, loading, with the linked request active and the first page shown", () => {
    const state = initialInboxState({ activeId: 12, now: NOW });
    expect(state).toMatchObject({ tab: "open", open: null, archive: null, activeId: 12, shown: PAGE, now: NOW, filters: NO_FILTERS });
    expect(currentList(state)).toBeNull();
  });
});

describe("loading", () => {
  it("a loaded list lands on its tab with its total and clears an earlier error", () => {
    const failed = run(START, { type: "loadFailed", message: "The server cannot be reached" });
    expect(failed.loadError).toBe("The server cannot be reached");
    const state = run(failed, { type: "loaded", which: "archive", results: [request(9)], count: 40 });
    expect(state.archive?.map((r) => r.id)).toEqual([9]);
    expect(state.open).toBeNull();
    expect(state.totals).toEqual({ open: 0, archive: 40 });
    expect(state.loadError).toBe("");
    expect(currentList(run(state, { type: "tab", tab: "archive" }))?.map((r) => r.id)).toEqual([9]);
  });

  it("a fresh copy of one request replaces it in the open list, in place", () => {
    const state = run(LOADED, { type: "refreshed", request: request(2, { title: "Seen" }) });
    expect(state.open?.map((r) => r.title)).toEqual(["Request 1", "Seen", "Request 3"]);
  });
});

describe("selection", () => {
  it("toggle adds and removes one request", () => {
    const once = run(LOADED, { type: "toggle", id: 2 });
    expect([...once.selected]).toEqual([2]);
    expect([...run(once, { type: "toggle", id: 2 }).selected]).toEqual([]);
  });

  it("a flow's checkbox selects or clears the requests given and keeps the rest", () => {
    const state = run(LOADED, { type: "toggle", id: 9 }, { type: "selectMany", ids: [1, 2], on: true });
    expect([...state.selected]).toEqual([9, 1, 2]);
    expect([...run(state, { type: "selectMany", ids: [1, 2], on: false }).selected]).toEqual([9]);
  });

  it("changing tab clears the selection and the bulk summary", () => {
    const summary = { decision: "approve" as const, done: 1, total: 1, refused: [], titles: new Map<number, string>() };
    const state = run(LOADED, { type: "toggle", id: 1 }, { type: "bulkDone", summary }, { type: "tab", tab: "archive" });
    expect(state.tab).toBe("archive");
    expect([...state.selected]).toEqual([]);
    expect(state.summary).toBeNull();
  });

  it("Escape clears the selection and the summary", () => {
    const state = run(LOADED, { type: "toggle", id: 1 }, { type: "escape" });
    expect([...state.selected]).toEqual([]);
    expect(state.summary).toBeNull();
  });
});

describe("deciding", () => {
  it("asking opens the dialog and hides an earlier summary", () => {
    const summary = { decision: "reject" as const, done: 0, total: 2, refused: [], titles: new Map<number, string>() };
    const state = run(LOADED, { type: "bulkDone", summary }, { type: "ask", pending: { ids: [1], decision: "approve" } });
    expect(state.pending).toEqual({ ids: [1], decision: "approve" });
    expect(state.summary).toBeNull();
    expect(run(state, { type: "cancel" }).pending).toBeNull();
  });

  it("decided requests leave the open list and the selection, and the message is announced", () => {
    const state = run(LOADED, { type: "selectMany", ids: [1, 3], on: true }, { type: "decided", ids: [1, 2], message: "Approved 2 of 2 done." });
    expect(state.open?.map((r) => r.id)).toEqual([3]);
    expect([...state.selected]).toEqual([3]);
    expect(state.announce).toBe("Approved 2 of 2 done.");
  });

  it("a bulk decision closes the dialog and keeps its summary with the refusals", () => {
    const refused = [{ id: 2, result: "refused" as const, code: "approval.not_allowed", detail: "You are not in its groups." }];
    const summary = { decision: "approve" as const, done: 1, total: 2, refused, titles: new Map([[2, "Request 2"]]) };
    const state = run(LOADED, { type: "ask", pending: { ids: [1, 2], decision: "approve" } }, { type: "bulkDone", summary });
    expect(state.pending).toBeNull();
    expect(state.summary).toBe(summary);
    expect(run(state, { type: "dismiss" }).summary).toBeNull();
  });
});

describe("the page", () => {
  it("Show more adds one page to what is shown", () => {
    expect(run(LOADED, { type: "showMore" }, { type: "showMore" }).shown).toBe(3 * PAGE);
  });

  it("setting a field to the value it has returns the same state", () => {
    expect(run(LOADED, { type: "filters", filters: LOADED.filters })).toBe(LOADED);
    expect(run(LOADED, { type: "tick", now: NOW })).toBe(LOADED);
    expect(run(LOADED, { type: "help", shown: false })).toBe(LOADED);
    expect(run(LOADED, { type: "cancel" })).toBe(LOADED);
  });

  it("the reducer never changes the state it is given", () => {
    const before = JSON.stringify({ ...LOADED, selected: [...LOADED.selected] });
    run(LOADED, { type: "toggle", id: 1 }, { type: "decided", ids: [1], message: "m" }, { type: "refreshed", request: request(2, { title: "x" }) });
    expect(JSON.stringify({ ...LOADED, selected: [...LOADED.selected] })).toBe(before);
  });
});
