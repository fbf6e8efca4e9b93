/**
 * The inbox page's state as one value, and the pure reducer that changes it:
 * the two lists and their totals, filters, the active request, the selection,
 * the decision being asked for, the bulk summary and what is announced.
 * No React, no DOM: vitest runs it as is.
 */
import { NO_FILTERS, type Filters } from "./model";
import type { ApprovalRequest, BulkResult } from "./types";

export type Tab = "open" | "archive";
export type Verdict = "approve" | "reject";

/** The decision the dialog asks to confirm, and on which requests. */
export interface Pending { ids: number[]; decision: Verdict }

/** What a bulk decision did: done, of how many, and each refusal with its request's title. */
export interface Summary { decision: Verdict; done: number; total: number; refused: BulkResult[]; titles: Map<number, string> }

/** Requests shown at first, and how many more each "Show more" adds. */
export const PAGE = 200;
export const VERB: Record<Verdict, string> = { approve: "Approve", reject: "Reject" };
export const PAST: Record<Verdict, string> = { approve: "Approved", reject: "Rejected" };

export interface InboxState {
  tab: Tab;
  /** Null until loaded. */
  open: ApprovalRequest[] | null;
  archive: ApprovalRequest[] | null;
  /** How many the server holds for each tab (the lists may hold fewer). */
  totals: Record<Tab, number>;
  loadError: string;
  filters: Filters;
  activeId: number | null;
  selected: Set<number>;
  pending: Pending | null;
  summary: Summary | null;
  help: boolean;
  announce: string;
  shown: number;
  /** The clock relative times are read against (ms since the epoch). */
  now: number;
}

export type InboxAction =
  | { type: "loaded"; which: Tab; results: ApprovalRequest[]; count: number }
  | { type: "loadFailed"; message: string }
  | { type: "tick"; now: number }
  | { type: "tab"; tab: Tab }
  | { type: "filters"; filters: Filters }
  | { type: "activate"; id: number }
  | { type: "refreshed"; request: ApprovalRequest }
  | { type: "toggle"; id: number }
  | { type: "selectMany"; ids: number[]; on: boolean }
  | { type: "clearSelection" }
  | { type: "ask"; pending: Pending }
  | { type: "cancel" }
  | { type: "bulkDone"; summary: Summary }
  | { type: "decided"; ids: number[]; message: string }
  | { type: "announce"; text: string }
  | { type: "dismiss" }
  | { type: "escape" }
  | { type: "help"; shown: boolean }
  | { type: "showMore" };

export function initialInboxState({ activeId, now }: { activeId: number | null; now: number }): InboxState {
  return {
    tab: "open", open: null, archive: null, totals: { open: 0, archive: 0 }, loadError: "", filters: NO_FILTERS,
    activeId, selected: new Set(), pending: null, summary: null, help: false, announce: "", shown: PAGE, now,
  };
}

/** Set one field; the same value keeps the same state, so React skips the render as `useState` would. */
function withField<K extends keyof InboxState>(state: InboxState, key: K, value: InboxState[K]): InboxState {
  return Object.is(state[key], value) ? state : { ...state, [key]: value };
}

function toggled(selected: Set<number>, id: number): Set<number> {
  const next = new Set(selected);
  if (next.has(id)) next.delete(id); else next.add(id);
  return next;
}

function selectedMany(selected: Set<number>, ids: number[], on: boolean): Set<number> {
  const next = new Set(selected);
  for (const id of ids) { if (on) next.add(id); else next.delete(id); }
  return next;
}

/** Decided requests leave the open list and the selection; the message is announced. */
function decided(state: InboxState, ids: number[], message: string): InboxState {
  return {
    ...state,
    open: state.open?.filter((r) => !ids.includes(r.id)) ?? state.open,
    selected: new Set([...state.selected].filter((id) => !ids.includes(id))),
    announce: message,
  };
}

function loaded(state: InboxState, action: Extract<InboxAction, { type: "loaded" }>): InboxState {
  const list = action.which === "open" ? { open: action.results } : { archive: action.results };
  return { ...state, ...list, totals: { ...state.totals, [action.which]: action.count }, loadError: "" };
}

function decisionReducer(state: InboxState, action: InboxAction): InboxState {
  switch (action.type) {
    case "ask": return { ...state, summary: null, pending: action.pending };
    case "cancel": return withField(state, "pending", null);
    case "bulkDone": return { ...state, pending: null, summary: action.summary };
    case "decided": return decided(state, action.ids, action.message);
    case "announce": return withField(state, "announce", action.text);
    case "dismiss": return withField(state, "summary", null);
    case "escape": return { ...state, selected: new Set(), summary: null };
    default: return state;
  }
}

/** Return the state after one action; the state given is never changed. */
export function inboxReducer(state: InboxState, action: InboxAction): InboxState {
  switch (action.type) {
    case "loaded": return loaded(state, action);
    case "loadFailed": return withField(state, "loadError", action.message);
    case "tick": return withField(state, "now", action.now);
    case "tab": return { ...state, tab: action.tab, selected: new Set(), summary: null };
    case "filters": return withField(state, "filters", action.filters);
    case "activate": return withField(state, "activeId", action.id);
    case "refreshed":
      return { ...state, open: state.open?.map((r) => (r.id === action.request.id ? action.request : r)) ?? state.open };
    case "toggle": return { ...state, selected: toggled(state.selected, action.id) };
    case "selectMany": return { ...state, selected: selectedMany(state.selected, action.ids, action.on) };
    case "clearSelection": return { ...state, selected: new Set() };
    case "help": return withField(state, "help", action.shown);
    case "showMore": return { ...state, shown: state.shown + PAGE };
    default: return decisionReducer(state, action);
  }
}

/** The list on the current tab: null until it loads. */
export function currentList(state: InboxState): ApprovalRequest[] | null {
  return state.tab === "open" ? state.open : state.archive;
}
