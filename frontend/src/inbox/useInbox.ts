/**
 * The inbox page's hooks: loading the lists (again on a count change, the
 * clock every 30 s), the active request and its audited first look, moving
 * the focus, a linked request, deciding (one or many), and the keyboard.
 */
import { type Dispatch, type RefObject, useCallback, useEffect, useRef } from "react";
import { ApiError, type InboxApi } from "./api";
import { type InboxAction, type InboxState, PAST, type Tab, type Verdict } from "./inboxState";
import { COUNT_EVENT } from "./live";
import { bulkSentence, move } from "./model";
import type { ApprovalRequest } from "./types";

/** The request a link names (`/inbox/?request=12`, as in the notification email), or null. */
export function linkedRequest(): number | null {
  const id = Number(new URLSearchParams(window.location.search).get("request"));
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

function typing(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Load the open list now and on every count change, the archive when its tab opens; return the loader. */
export function useInboxLoading(api: InboxApi, tab: Tab, dispatch: Dispatch<InboxAction>): (which: Tab) => Promise<void> {
  const load = useCallback(async (which: Tab) => {
    try {
      const page = which === "open" ? await api.open() : await api.archive();
      dispatch({ type: "loaded", which, results: page.results, count: page.count });
    } catch (error) {
      dispatch({ type: "loadFailed", message: messageOf(error) });
    }
    dispatch({ type: "tick", now: Date.now() });
  }, [api, dispatch]);

  useEffect(() => { void load("open"); }, [load]);
  useEffect(() => { if (tab === "archive") void load("archive"); }, [tab, load]);
  useEffect(() => {
    const refresh = () => { void load("open"); };
    window.addEventListener(COUNT_EVENT, refresh);
    const tick = setInterval(() => dispatch({ type: "tick", now: Date.now() }), 30_000);
    return () => { window.removeEventListener(COUNT_EVENT, refresh); clearInterval(tick); };
  }, [load, dispatch]);
  return load;
}

/** Keep the active request among those listed, and audit an approver's first look once the focus rests. */
export function useActiveRequest(api: InboxApi, state: InboxState, ordered: ApprovalRequest[], dispatch: Dispatch<InboxAction>) {
  const { tab, activeId } = state;
  useEffect(() => {
    if (ordered.length && !ordered.some((r) => r.id === activeId)) dispatch({ type: "activate", id: ordered[0]!.id });
  }, [ordered, activeId, dispatch]);

  useEffect(() => {
    if (tab !== "open" || activeId === null) return;
    const timer = setTimeout(() => {
      api.detail(activeId).then((fresh) => dispatch({ type: "refreshed", request: fresh }), () => undefined);
    }, 700);
    return () => clearTimeout(timer);
  }, [api, tab, activeId, dispatch]);
}

/** The listed items' elements by request id, and a function that makes one active and focuses it. */
export function useItemFocus(ordered: ApprovalRequest[], dispatch: Dispatch<InboxAction>) {
  const itemRefs = useRef(new Map<number, HTMLElement>());
  const focusItem = useCallback((id: number | undefined) => {
    if (id === undefined) return;
    dispatch({ type: "activate", id });
    requestAnimationFrame(() => itemRefs.current.get(id)?.focus());
  }, [dispatch]);

  // A link to one request (the notification email's) brings it into view once the list is in.
  const linked = useRef(linkedRequest());
  useEffect(() => {
    if (linked.current === null || !ordered.some((r) => r.id === linked.current)) return;
    const id = linked.current;
    linked.current = null;
    requestAnimationFrame(() => itemRefs.current.get(id)?.scrollIntoView({ block: "center" }));
  }, [ordered]);
  return { itemRefs, focusItem };
}

interface DecisionInputs {
  api: InboxApi;
  state: InboxState;
  ordered: ApprovalRequest[];
  active: ApprovalRequest | null;
  focusItem: (id: number | undefined) => void;
  load: (which: Tab) => Promise<void>;
}

/** Ask for a decision (the dialog confirms it), send it, and move on to the next request. */
export function useDecisions({ api, state, ordered, active, focusItem, load }: DecisionInputs, dispatch: Dispatch<InboxAction>) {
  const { open, selected, tab, activeId, pending } = state;
  const ask = useCallback((decision: Verdict, ids?: number[]) => {
    const decidable = (list: number[]) => list.filter((id) => open?.find((r) => r.id === id)?.may_decide);
    const chosen = ids ?? (selected.size ? [...selected] : active ? [active.id] : []);
    if (tab !== "open" || decidable(chosen).length === 0) {
      dispatch({ type: "announce", text: chosen.length ? "You may not decide this request." : "Choose a request first (j and k move)." });
      return;
    }
    dispatch({ type: "ask", pending: { ids: decidable(chosen), decision } });
  }, [open, selected, active, tab, dispatch]);

  const finish = useCallback((decided: number[], message: string) => {
    const index = ordered.findIndex((r) => r.id === activeId);
    const rest = ordered.filter((r) => !decided.includes(r.id));
    dispatch({ type: "decided", ids: decided, message });
    focusItem(rest[Math.min(Math.max(index, 0), rest.length - 1)]?.id);
  }, [ordered, activeId, focusItem, dispatch]);

  const submit = useCallback(async (comment: string): Promise<string> => {
    if (pending === null) return "";
    const { ids, decision } = pending;
    const titles = new Map((open ?? []).map((r) => [r.id, r.title] as [number, string]));
    try {
      if (ids.length === 1) {
        await api.decide(ids[0]!, decision, comment);
        dispatch({ type: "cancel" });
        finish(ids, `${PAST[decision]}: ${titles.get(ids[0]!) ?? ""}`);
      } else {
        const result = await api.decideMany(ids, decision, comment);
        const done = result.results.filter((r) => r.result === "done").map((r) => r.id);
        const refused = result.results.filter((r) => r.result === "refused");
        dispatch({ type: "bulkDone", summary: { decision, done: result.done, total: result.total, refused, titles } });
        finish(done, `${PAST[decision]} ${bulkSentence(result.done, result.total)}.`);
      }
      return "";
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) void load("open");
      return messageOf(error);
    }
  }, [pending, open, api, finish, load, dispatch]);

  return { ask, finish, submit };
}

interface KeyInputs {
  state: InboxState;
  active: ApprovalRequest | null;
  step: (delta: number) => void;
  ask: (decision: Verdict) => void;
  searchRef: RefObject<HTMLInputElement | null>;
}

/** The inbox's single-key shortcuts (none while a dialog is open or a field has the focus). */
export function useInboxKeys({ state, active, step, ask, searchRef }: KeyInputs, dispatch: Dispatch<InboxAction>) {
  const { pending, help, tab } = state;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (pending || help || typing(event.target)) return;
      const keys: Record<string, () => void> = {
        j: () => step(1), ArrowDown: () => step(1), k: () => step(-1), ArrowUp: () => step(-1),
        a: () => ask("approve"), r: () => ask("reject"),
        x: () => { if (active && tab === "open") dispatch({ type: "toggle", id: active.id }); },
        "?": () => dispatch({ type: "help", shown: true }),
        "/": () => searchRef.current?.focus(),
        Escape: () => dispatch({ type: "escape" }),
      };
      const action = keys[event.key];
      if (action) { event.preventDefault(); action(); }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [pending, help, step, ask, active, tab, searchRef, dispatch]);
}

/** Move the active request by `delta` in the listed order, and focus it. */
export function useStep(ordered: ApprovalRequest[], activeId: number | null, focusItem: (id: number | undefined) => void) {
  return useCallback((delta: number) => {
    const index = ordered.findIndex((r) => r.id === activeId);
    focusItem(ordered[move(index < 0 ? 0 : index, index < 0 ? 0 : delta, ordered.length)]?.id);
  }, [ordered, activeId, focusItem]);
}
