import { describe, expect, test } from "vitest";
import { moveNodes } from "../../src/designer/ops";
import type { VersionRecord } from "../../src/editor/api";
import {
  type EditorAction,
  type EditorPage,
  editorReducer,
  type EditorState,
  graphJson,
  initialEditorState,
  isReadOnly,
  redoable,
  selectedNode,
  shownDoc,
  testedNow,
  undoable,
  withPositions,
} from "../../src/editor/editorState";
import type { TestResult } from "../../src/editor/TestRun";
import type { GraphDocument } from "../../src/graph/types";
import { invoiceSignoff } from "../fixtures/invoice-signoff";

const PLACED = withPositions(invoiceSignoff);

const PAGE: EditorPage = {
  slug: "invoice-sign-off",
  name: "Invoice sign-off",
  canEdit: true,
  draft: invoiceSignoff,
  revision: 3,
  latestVersion: 2,
  approvalGroups: ["finance"],
};

function run(state: EditorState, ...actions: EditorAction[]): EditorState {
  return actions.reduce(editorReducer, state);
}

function renamed(doc: GraphDocument, name: string): GraphDocument {
  return { ...doc, name };
}

function version(number: number, graph: GraphDocument): VersionRecord {
  return { flow: "invoice-sign-off", number, graph, content_hash: "h", published_by: "ada", published_at: "2026-12-01T10:00:00Z" };
}

const RESULT: TestResult = { status: "completed", error: null, state: {}, colors: { fin: "completed" }, reasons: {}, waiting_on: [], refused: [] };

describe("the editor's initial state", () => {
  test("a page that may edit opens saved, with every node placed and nothing selected", () => {
    const state = initialEditorState(PAGE);
    expect(state.saveState).toBe("saved");
    expect(state.history.present.nodes.every((n) => state.history.present.layout?.[n.id] !== undefined)).toBe(true);
    expect(state.history.present.layout?.start).toEqual({ x: 0, y: 0 });
    expect(state.history.past).toEqual([]);
    expect([...state.selected.nodes]).toEqual([]);
    expect(state.latestVersion).toBe(2);
    expect(state.panels).toEqual({ versions: false, shortcuts: false, testing: false });
  });

  test("a page that may not edit opens read-only", () => {
    const state = initialEditorState({ ...PAGE, canEdit: false });
    expect(state.saveState).toBe("readonly");
    expect(isReadOnly(state, { canEdit: false })).toBe(true);
  });

  test("a document already placed is kept as it is", () => {
    expect(withPositions(PLACED)).toBe(PLACED);
  });
});

describe("edits, undo and redo", () => {
  test("an edit is one undo step, and redo brings it back", () => {
    const edited = run(initialEditorState(PAGE), { type: "edit", doc: renamed(PLACED, "Renamed") });
    expect(edited.history.present.name).toBe("Renamed");
    expect(undoable(edited)).toBe(true);
    const undone = run(edited, { type: "undo" });
    expect(undone.history.present.name).toBe("Invoice sign-off");
    expect(redoable(undone)).toBe(true);
    expect(run(undone, { type: "redo" }).history.present.name).toBe("Renamed");
  });

  test("an edit that changes nothing, or an undo with nothing to undo, returns the same state", () => {
    const state = initialEditorState(PAGE);
    expect(run(state, { type: "edit", doc: structuredClone(state.history.present) })).toBe(state);
    expect(run(state, { type: "undo" })).toBe(state);
    expect(run(state, { type: "redo" })).toBe(state);
  });

  test("the reducer never changes the state it is given", () => {
    const state = initialEditorState(PAGE);
    const before = JSON.stringify({ ...state, selected: [...state.selected.nodes] });
    run(state, { type: "edit", doc: renamed(PLACED, "x") }, { type: "pick", kind: "nodes", picks: [["fin", true]] }, { type: "status", text: "s" });
    expect(JSON.stringify({ ...state, selected: [...state.selected.nodes] })).toBe(before);
  });
});

describe("selection", () => {
  test("picks add and remove ids of one kind and leave the other kind alone", () => {
    const state = run(
      initialEditorState(PAGE),
      { type: "select", nodes: ["fin"], edges: ["e1"] },
      { type: "pick", kind: "nodes", picks: [["leg", true], ["fin", false]] },
    );
    expect([...state.selected.nodes]).toEqual(["leg"]);
    expect([...state.selected.edges]).toEqual(["e1"]);
  });

  test("picks from two batches before a render both count", () => {
    const state = run(initialEditorState(PAGE), { type: "pick", kind: "edges", picks: [["e1", true]] }, { type: "pick", kind: "edges", picks: [["e2", true]] });
    expect([...state.selected.edges]).toEqual(["e1", "e2"]);
  });

  test("the inspector's node is the one node selected in the draft", () => {
    const one = run(initialEditorState(PAGE), { type: "select", nodes: ["fin"] });
    expect(selectedNode(one)?.id).toBe("fin");
    expect(selectedNode(run(one, { type: "pick", kind: "nodes", picks: [["leg", true]] }))).toBeNull();
    expect(selectedNode(run(one, { type: "view", version: version(1, PLACED) }))).toBeNull();
  });
});

describe("escape", () => {
  test("closes the shortcuts first, then the history, then clears the selection", () => {
    const open = run(
      initialEditorState(PAGE),
      { type: "select", nodes: ["fin"] },
      { type: "panel", panel: "shortcuts", open: true },
      { type: "panel", panel: "versions", open: "toggle" },
    );
    const first = run(open, { type: "escape", inField: false });
    expect(first.panels).toEqual({ versions: true, shortcuts: false, testing: false });
    const second = run(first, { type: "escape", inField: false });
    expect(second.panels.versions).toBe(false);
    expect([...second.selected.nodes]).toEqual(["fin"]);
    expect([...run(second, { type: "escape", inField: false }).selected.nodes]).toEqual([]);
  });

  test("in a text field keeps the selection", () => {
    const state = run(initialEditorState(PAGE), { type: "select", nodes: ["fin"] });
    expect(run(state, { type: "escape", inField: true })).toBe(state);
  });
});

describe("saving", () => {
  test("an edit marks the draft dirty unless a save is under way", () => {
    const state = initialEditorState(PAGE);
    expect(run(state, { type: "draftChanged" }).saveState).toBe("dirty");
    const saving = run(state, { type: "saveState", saveState: "saving" });
    expect(run(saving, { type: "draftChanged" })).toBe(saving);
  });

  test("a save clears a conflict and is saved, or dirty when edits came in meanwhile", () => {
    const conflicted = run(initialEditorState(PAGE), { type: "conflict", conflict: { revision: 5, draft: PLACED, updatedAt: "2026-12-01T10:00:00Z" } });
    expect(conflicted.saveState).toBe("conflict");
    expect(run(conflicted, { type: "saved", dirty: false })).toMatchObject({ conflict: null, saveState: "saved" });
    expect(run(conflicted, { type: "saved", dirty: true }).saveState).toBe("dirty");
  });

  test("a failed save keeps its message for the tooltip", () => {
    expect(run(initialEditorState(PAGE), { type: "saveFailed", message: "Server error" })).toMatchObject({ saveState: "error", saveError: "Server error" });
  });

  test("taking theirs loads their draft as an undoable step and says so", () => {
    const theirs = renamed(invoiceSignoff, "Theirs");
    const conflicted = run(initialEditorState(PAGE), { type: "conflict", conflict: { revision: 5, draft: theirs, updatedAt: "t" } });
    const taken = run(conflicted, { type: "theirsTaken", draft: theirs });
    expect(taken.history.present).toEqual(withPositions(theirs));
    expect(taken.history.past).toHaveLength(1);
    expect(taken).toMatchObject({ conflict: null, saveState: "saved", status: "Loaded the saved draft. Undo (Ctrl+Z) brings your version back." });
  });
});

describe("versions and publishing", () => {
  test("a version on show is read-only and on the canvas; back returns to the draft", () => {
    const old = version(1, renamed(PLACED, "Old"));
    const viewing = run(initialEditorState(PAGE), { type: "view", version: old });
    expect(isReadOnly(viewing, PAGE)).toBe(true);
    expect(shownDoc(viewing).name).toBe("Old");
    const back = run(viewing, { type: "view", version: null });
    expect(shownDoc(back)).toBe(back.history.present);
  });

  test("restoring a version puts it in the draft as one step and leaves the view", () => {
    const old = version(1, renamed(invoiceSignoff, "Old"));
    const restored = run(initialEditorState(PAGE), { type: "view", version: old }, { type: "restore", version: old });
    expect(restored.viewing).toBeNull();
    expect(restored.history.present).toEqual(withPositions(old.graph));
    expect(restored.status).toBe("Restored version 1 into the draft. Undo (Ctrl+Z) reverts.");
  });

  test("publishing records the latest version and says so", () => {
    const state = run(initialEditorState(PAGE), { type: "publishing", publishing: true }, { type: "published", version: 3 }, { type: "publishing", publishing: false });
    expect(state).toMatchObject({ latestVersion: 3, publishing: false, status: "Published version 3." });
  });
});

describe("panels, test runs and the status line", () => {
  test("a toggle opens a closed panel and closes an open one", () => {
    const once = run(initialEditorState(PAGE), { type: "panel", panel: "testing", open: "toggle" });
    expect(once.panels.testing).toBe(true);
    expect(run(once, { type: "panel", panel: "testing", open: "toggle" }).panels.testing).toBe(false);
  });

  test("a test run's colors apply until the graph changes; moving a node keeps them", () => {
    const state = initialEditorState(PAGE);
    const doc = state.history.present;
    const tested = run(state, { type: "panel", panel: "testing", open: true }, { type: "tested", tested: { json: graphJson(doc), result: RESULT } });
    expect(testedNow(tested)).toBe(RESULT);
    expect(testedNow(run(tested, { type: "edit", doc: moveNodes(doc, { fin: { x: 900, y: 900 } }) }))).toBe(RESULT);
    expect(testedNow(run(tested, { type: "edit", doc: renamed(doc, "Other") }))).toBeNull();
    expect(testedNow(run(tested, { type: "view", version: version(1, doc) }))).toBeNull();
  });

  test("closing the test run hides its panel and drops its colors", () => {
    const state = initialEditorState(PAGE);
    const tested = run(state, { type: "panel", panel: "testing", open: true }, { type: "tested", tested: { json: graphJson(state.history.present), result: RESULT } });
    const closed = run(tested, { type: "testClosed" });
    expect(closed.panels.testing).toBe(false);
    expect(closed.tested).toBeNull();
  });

  test("setting a field to the value it has returns the same state", () => {
    const state = run(initialEditorState(PAGE), { type: "status", text: "Copied 1 node(s)." });
    expect(run(state, { type: "status", text: "Copied 1 node(s)." })).toBe(state);
    expect(run(state, { type: "reveal", id: null })).toBe(state);
    expect(run(state, { type: "drag", positions: null })).toBe(state);
    expect(run(state, { type: "saveState", saveState: "saved" })).toBe(state);
  });
});
