/**
 * The approver's inbox: open requests by flow, filters, decisions (one or many), archive.
 * Its state is one value changed by a pure reducer (inboxState.ts); the hooks in
 * useInbox.ts load, focus, decide and listen to the keyboard.
 */
import { useMemo, useReducer, useRef } from "react";
import { InboxApi } from "./api";
import { BulkBar, BulkSummary, InboxFilters, InboxTabs } from "./controls";
import { DecideDialog, Detail } from "./Detail";
import { currentList, inboxReducer, initialInboxState, PAST } from "./inboxState";
import { groupByFlow, matches } from "./model";
import { Shortcuts } from "./parts";
import { RequestList } from "./RequestList";
import type { InboxConfig } from "./types";
import { linkedRequest, useActiveRequest, useDecisions, useInboxKeys, useInboxLoading, useItemFocus, useStep } from "./useInbox";

export function Inbox({ config }: { config: InboxConfig }) {
  const api = useMemo(() => new InboxApi(config), [config]);
  const [state, dispatch] = useReducer(inboxReducer, null, () => initialInboxState({ activeId: linkedRequest(), now: Date.now() }));
  const { tab, filters, now, shown, activeId, loadError, pending, help, announce, open } = state;
  const searchRef = useRef<HTMLInputElement>(null);
  const load = useInboxLoading(api, tab, dispatch);

  const source = currentList(state);
  const visible = useMemo(() => (source ?? []).filter((r) => matches(r, filters, now)), [source, filters, now]);
  const groups = useMemo(() => groupByFlow(visible.slice(0, shown)), [visible, shown]);
  const ordered = useMemo(() => groups.flatMap((g) => g.requests), [groups]);
  const active = ordered.find((r) => r.id === activeId) ?? null;

  useActiveRequest(api, state, ordered, dispatch);
  const { itemRefs, focusItem } = useItemFocus(ordered, dispatch);
  const step = useStep(ordered, activeId, focusItem);
  const { ask, finish, submit } = useDecisions({ api, state, ordered, active, focusItem, load }, dispatch);
  useInboxKeys({ state, active, step, ask, searchRef }, dispatch);
  const parts = { state, dispatch };

  return (
    <div className="inbox">
      <InboxTabs {...parts} />

      <InboxFilters {...parts} source={source} searchRef={searchRef} />

      <BulkBar {...parts} ask={ask} />

      <BulkSummary {...parts} />

      {loadError ? (
        <p className="error" role="alert">
          Could not load the requests: {loadError}{" "}
          <button type="button" className="link-button" onClick={() => void load(tab)}>Try again</button>
        </p>
      ) : null}

      <div className="inbox-body" role="tabpanel" id="inbox-panel" aria-labelledby={`inbox-tab-${tab}`}>
        <RequestList {...parts} config={config} itemRefs={itemRefs} ask={ask} source={source} visible={visible} groups={groups} />
        {ordered.length === 0 ? null : <aside className="inbox-detail" aria-label="Request details">
          {active ? <Detail key={active.id} request={active} tab={tab} now={now} config={config}
            onDecided={(id, decision) => finish([id], `${PAST[decision]}: ${active.title}`)}
            api={api} onHandedOver={(id, message) => { finish([id], message); void load("open"); }}
            onChanged={() => void load("open")} /> : (
            <p className="muted">Choose a request to see its details.</p>
          )}
        </aside>}
      </div>

      {pending ? (
        <DecideDialog pending={pending} titles={open ?? []} onCancel={() => dispatch({ type: "cancel" })} onSubmit={submit} />
      ) : null}
      {help ? <Shortcuts onClose={() => dispatch({ type: "help", shown: false })} /> : null}
      <div className="visually-hidden" aria-live="polite" role="status">{announce}</div>
    </div>
  );
}
