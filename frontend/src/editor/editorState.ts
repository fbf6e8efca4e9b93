/**
 * The flow editor's state as one value, and the pure reducer that changes it.
 * The document's undo history, the selection, saving, versions, panels and the
 * status line all live here; the editor's hooks dispatch actions and the
 * canvas is derived from the result. No React, no DOM: vitest runs it as is.
 */

import { autoLayout } from "../designer/autolayout";
import { canRedo, canUndo, createHistory, type History, push, redo, undo } from "../designer/history";
import { moveNodes } from "../designer/ops";
import { editorPositions } from "../designer/serialize";
import type { GraphDocument, GraphNode, Point } from "../graph/types";
import type { ActionInfo, VersionRecord } from "./api";
import type { TestResult } from "./TestRun";

export interface EditorPage {
  slug: string;
  name: string;
  canEdit: boolean;
  draft: GraphDocument;
  revision: number;
  latestVersion: number | null;
  /** Group names an approval can name (the approval groups that exist). */
  approvalGroups: string[];
}

export type SaveState = "saved" | "dirty" | "saving" | "error" | "conflict" | "readonly";

export interface Conflict {
  revision: number;
  draft: GraphDocument;
  updatedAt: string;
}

export interface Selection {
  nodes: Set<string>;
  edges: Set<string>;
}

/** A test run's result, with the graph (layout aside) it belongs to. */
export interface Tested {
  json: string;
  result: TestResult;
}

/** The panels a button or a key opens and closes. */
export type PanelName = "versions" | "shortcuts" | "testing";

export interface EditorState {
  history: History<GraphDocument>;
  selected: Selection;
  /** Positions of nodes being dragged, not yet committed to the document. */
  dragging: Record<string, Point> | null;
  actions: ActionInfo[];
  saveState: SaveState;
  saveError: string;
  conflict: Conflict | null;
  latestVersion: number | null;
  versions: VersionRecord[] | null;
  /** The published version on show instead of the draft, read-only. */
  viewing: VersionRecord | null;
  panels: Record<PanelName, boolean>;
  status: string;
  publishing: boolean;
  tested: Tested | null;
  /** A node just added or pasted, to pan to if it landed out of view. */
  reveal: string | null;
}

export type EditorAction =
  | { type: "edit"; doc: GraphDocument }
  | { type: "undo" }
  | { type: "redo" }
  | { type: "select"; nodes: Iterable<string>; edges?: Iterable<string> }
  | { type: "pick"; kind: keyof Selection; picks: ReadonlyArray<readonly [string, boolean]> }
  | { type: "drag"; positions: Record<string, Point> | null }
  | { type: "actionsLoaded"; actions: ActionInfo[] }
  | { type: "saveState"; saveState: SaveState }
  | { type: "draftChanged" }
  | { type: "saved"; dirty: boolean }
  | { type: "saveFailed"; message: string }
  | { type: "conflict"; conflict: Conflict }
  | { type: "theirsTaken"; draft: GraphDocument }
  | { type: "versionsLoaded"; versions: VersionRecord[] }
  | { type: "view"; version: VersionRecord | null }
  | { type: "restore"; version: VersionRecord }
  | { type: "publishing"; publishing: boolean }
  | { type: "published"; version: number }
  | { type: "panel"; panel: PanelName; open: boolean | "toggle" }
  | { type: "escape"; inField: boolean }
  | { type: "tested"; tested: Tested | null }
  | { type: "testClosed" }
  | { type: "reveal"; id: string | null }
  | { type: "status"; text: string };

export const SAVE_TEXT: Record<SaveState, string> = {
  saved: "All changes saved",
  dirty: "Unsaved changes…",
  saving: "Saving…",
  error: "Not saved",
  conflict: "Not saved: conflict",
  readonly: "Read-only",
};

export function json(value: unknown): string {
  return JSON.stringify(value);
}

/** The document without its layout: what a test run's colors belong to (moving a node keeps them). */
export function graphJson(doc: GraphDocument): string {
  const { layout: _layout, ...graph } = doc as GraphDocument & { layout?: unknown };
  return json(graph);
}

/**
 * Fill in positions for nodes without one, so that nothing jumps when a node
 * is added: the auto-layout when the document has none, else beside the rest.
 */
export function withPositions(doc: GraphDocument): GraphDocument {
  if (doc.nodes.every((node) => doc.layout?.[node.id] !== undefined)) return doc;
  if (doc.nodes.every((node) => doc.layout?.[node.id] === undefined)) return moveNodes(doc, autoLayout(doc));
  return moveNodes(doc, Object.fromEntries(editorPositions(doc)));
}

/** The state a page opens in: its draft with positions filled in, nothing selected. */
export function initialEditorState(page: EditorPage): EditorState {
  return {
    history: createHistory(withPositions(page.draft)),
    selected: { nodes: new Set(), edges: new Set() },
    dragging: null,
    actions: [],
    saveState: page.canEdit ? "saved" : "readonly",
    saveError: "",
    conflict: null,
    latestVersion: page.latestVersion,
    versions: null,
    viewing: null,
    panels: { versions: false, shortcuts: false, testing: false },
    status: "",
    publishing: false,
    tested: null,
    reveal: null,
  };
}

/** Set one field; the same value keeps the same state, so React skips the render as `useState` would. */
function withField<K extends keyof EditorState>(state: EditorState, key: K, value: EditorState[K]): EditorState {
  return Object.is(state[key], value) ? state : { ...state, [key]: value };
}

function edited(state: EditorState, doc: GraphDocument): EditorState {
  return withField(state, "history", push(state.history, doc));
}

function picked(selected: Selection, kind: keyof Selection, picks: ReadonlyArray<readonly [string, boolean]>): Selection {
  const ids = new Set(selected[kind]);
  for (const [id, on] of picks) {
    if (on) ids.add(id);
    else ids.delete(id);
  }
  return { ...selected, [kind]: ids };
}

/** Escape closes the shortcuts, else the history, else clears the selection (not while typing in a field). */
function escaped(state: EditorState, inField: boolean): EditorState {
  if (state.panels.shortcuts) return { ...state, panels: { ...state.panels, shortcuts: false } };
  if (state.panels.versions) return { ...state, panels: { ...state.panels, versions: false } };
  if (inField) return state;
  return { ...state, selected: { nodes: new Set(), edges: new Set() } };
}

function savingReducer(state: EditorState, action: EditorAction): EditorState {
  switch (action.type) {
    case "saveState":
      return withField(state, "saveState", action.saveState);
    case "draftChanged":
      return state.saveState === "saving" ? state : { ...state, saveState: "dirty" };
    case "saved":
      return { ...state, conflict: null, saveState: action.dirty ? "dirty" : "saved" };
    case "saveFailed":
      return { ...state, saveError: action.message, saveState: "error" };
    case "conflict":
      return { ...state, conflict: action.conflict, saveState: "conflict" };
    case "theirsTaken":
      return {
        ...edited(state, withPositions(action.draft)),
        conflict: null,
        saveState: "saved",
        status: "Loaded the saved draft. Undo (Ctrl+Z) brings your version back.",
      };
    default:
      return state;
  }
}

function versionsReducer(state: EditorState, action: EditorAction): EditorState {
  switch (action.type) {
    case "versionsLoaded":
      return { ...state, versions: action.versions };
    case "view":
      return withField(state, "viewing", action.version);
    case "restore":
      return {
        ...edited(state, withPositions(action.version.graph)),
        viewing: null,
        status: `Restored version ${action.version.number} into the draft. Undo (Ctrl+Z) reverts.`,
      };
    case "publishing":
      return withField(state, "publishing", action.publishing);
    case "published":
      return { ...state, latestVersion: action.version, status: `Published version ${action.version}.` };
    default:
      return savingReducer(state, action);
  }
}

/** Return the state after one action; the state given is never changed. */
export function editorReducer(state: EditorState, action: EditorAction): EditorState {
  switch (action.type) {
    case "edit":
      return edited(state, action.doc);
    case "undo":
      return withField(state, "history", undo(state.history));
    case "redo":
      return withField(state, "history", redo(state.history));
    case "select":
      return { ...state, selected: { nodes: new Set(action.nodes), edges: new Set(action.edges ?? []) } };
    case "pick":
      return action.picks.length === 0 ? state : { ...state, selected: picked(state.selected, action.kind, action.picks) };
    case "drag":
      return withField(state, "dragging", action.positions);
    case "actionsLoaded":
      return { ...state, actions: action.actions };
    case "panel": {
      const open = action.open === "toggle" ? !state.panels[action.panel] : action.open;
      return { ...state, panels: { ...state.panels, [action.panel]: open } };
    }
    case "escape":
      return escaped(state, action.inField);
    case "tested":
      return withField(state, "tested", action.tested);
    case "testClosed":
      return { ...state, panels: { ...state.panels, testing: false }, tested: null };
    case "reveal":
      return withField(state, "reveal", action.id);
    case "status":
      return withField(state, "status", action.text);
    default:
      return versionsReducer(state, action);
  }
}

// ---- what the page reads off the state ---------------------------------------------

/** Whether edits are refused: the user may not edit, or a published version is on show. */
export function isReadOnly(state: EditorState, page: Pick<EditorPage, "canEdit">): boolean {
  return !page.canEdit || state.viewing !== null;
}

/** The document on the canvas: the version on show, else the draft. */
export function shownDoc(state: EditorState): GraphDocument {
  return state.viewing?.graph ?? state.history.present;
}

/** A test run's result while it still applies: its colors stay on the canvas until the graph changes. */
export function testedNow(state: EditorState): TestResult | null {
  const { tested, viewing } = state;
  return tested !== null && viewing === null && tested.json === graphJson(state.history.present) ? tested.result : null;
}

/** The one node selected in the draft, for the inspector; null for none, several, or a version on show. */
export function selectedNode(state: EditorState): GraphNode | null {
  const { selected, viewing } = state;
  const doc = state.history.present;
  return selected.nodes.size === 1 && viewing === null ? (doc.nodes.find((n) => selected.nodes.has(n.id)) ?? null) : null;
}

export function undoable(state: EditorState): boolean {
  return canUndo(state.history);
}

export function redoable(state: EditorState): boolean {
  return canRedo(state.history);
}
