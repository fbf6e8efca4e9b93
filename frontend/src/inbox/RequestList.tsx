/** The inbox's list: requests grouped by flow, each an `Item`, with what to say when there are none. */
import type { Dispatch, RefObject } from "react";
import { type InboxAction, type InboxState, PAGE, type Tab, type Verdict } from "./inboxState";
import { NO_FILTERS, type FlowGroup } from "./model";
import {
  Decisions, Due, Icon, InputValues, Outcome, RunLink, ShownValues, StartedBy, Waiting, When, WhyNotNote,
} from "./parts";
import type { ApprovalRequest, InboxConfig } from "./types";

function Empty({ tab, config }: { tab: Tab; config: InboxConfig }) {
  if (tab === "archive") {
    return <p className="empty">No decided or cancelled requests yet. Requests you decide move here, with who decided what and when.</p>;
  }
  const groups = config.groups.length ? config.groups.join(", ") : "none";
  return (
    <p className="empty">
      Nothing waits for your decision. Requests for your groups ({groups}) appear here when a run
      reaches an approval step; the count in the navigation bar updates by itself.
    </p>
  );
}

interface ItemProps {
  request: ApprovalRequest; tab: Tab; now: number; config: InboxConfig; active: boolean; selected: boolean;
  register: (el: HTMLElement | null) => void; onFocus: () => void; onToggle: () => void;
  onDecide: (decision: Verdict) => void;
}

export function Item({ request, tab, now, config, active, selected, register, onFocus, onToggle, onDecide }: ItemProps) {
  const titleId = `request-${request.id}-title`;
  const state = request.overdue ? "overdue" : tab === "open" ? "waiting" : "closed";
  return (
    <article ref={register} tabIndex={active ? 0 : -1} aria-labelledby={titleId}
      aria-current={active ? "true" : undefined}
      className={`request request--${state}${active ? " request--active" : ""}${selected ? " request--selected" : ""}`}
      onFocus={onFocus} onClick={onFocus}>
      <div className="request-head">
        {tab === "open" ? (
          <input type="checkbox" checked={selected} disabled={!request.may_decide} onChange={onToggle}
            aria-label={`Select ${request.title}`} tabIndex={active ? 0 : -1} />
        ) : null}
        {tab === "open" ? <Icon name={request.overdue ? "alert" : "pause"} className="status-icon" /> : null}
        <h3 id={titleId} title={request.title}>{request.title}</h3>
      </div>
      {request.instructions ? <p className="instructions">{request.instructions}</p> : null}
      <ShownValues request={request} />
      <InputValues request={request} />
      <p className="meta">
        {tab === "open" ? <Waiting iso={request.created_at} now={now} /> : null}
        {tab === "archive" && request.closed_at ? <><Outcome request={request} /> · <When iso={request.closed_at} now={now} /></> : null}
        {" · "}<RunLink request={request} runUrl={config.runUrl} />
        {" · "}<span>{request.node}</span>
        {tab === "open" ? <> {" "}<Due request={request} now={now} /></> : null}
      </p>
      <p className="meta"><StartedBy request={request} now={now} /></p>
      {tab === "archive" ? <Decisions request={request} now={now} /> : null}
      {tab === "open" ? (
        request.may_decide ? (
          <div className="actions">
            <button type="button" tabIndex={active ? 0 : -1} onClick={(e) => { e.stopPropagation(); onDecide("approve"); }}
              aria-label={`Approve ${request.title}`}><Icon name="check" /> Approve…</button>
            <button type="button" tabIndex={active ? 0 : -1} className="danger" onClick={(e) => { e.stopPropagation(); onDecide("reject"); }}
              aria-label={`Reject ${request.title}`}><Icon name="cross" /> Reject…</button>
          </div>
        ) : <WhyNotNote request={request} />
      ) : null}
    </article>
  );
}

interface ListProps {
  state: InboxState; dispatch: Dispatch<InboxAction>; config: InboxConfig;
  itemRefs: RefObject<Map<number, HTMLElement>>; ask: (decision: Verdict, ids?: number[]) => void;
}

/** One flow's requests, with a checkbox that selects all it may decide (open tab). */
function FlowGroupSection({ group, state, dispatch, config, itemRefs, ask }: ListProps & { group: FlowGroup }) {
  const { tab, now, activeId, selected } = state;
  return (
    <section className="flow-group" aria-label={`Flow ${group.flow}`}>
      <h2>
        {tab === "open" ? (
          <input type="checkbox" aria-label={`Select all ${group.requests.length} of ${group.flow}`}
            checked={group.requests.every((r) => selected.has(r.id))}
            onChange={(e) => dispatch({ type: "selectMany", ids: group.requests.filter((r) => r.may_decide).map((r) => r.id), on: e.target.checked })} />
        ) : null}
        {group.flow} <span className="muted">({group.requests.length})</span>
      </h2>
      <ol className="requests">
        {group.requests.map((request) => (
          <li key={request.id}>
            <Item request={request} tab={tab} now={now} config={config}
              active={request.id === activeId} selected={selected.has(request.id)}
              register={(el) => { if (el) itemRefs.current.set(request.id, el); else itemRefs.current.delete(request.id); }}
              onFocus={() => dispatch({ type: "activate", id: request.id })} onToggle={() => dispatch({ type: "toggle", id: request.id })}
              onDecide={(decision) => ask(decision, [request.id])} />
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The current tab's requests: loading, empty, capped, filtered out, or grouped by flow, a page at a time. */
export function RequestList(props: ListProps & { source: ApprovalRequest[] | null; visible: ApprovalRequest[]; groups: FlowGroup[] }) {
  const { state, dispatch, config, source, visible, groups } = props;
  const { tab, totals, shown } = state;
  return (
    <section className="inbox-list" aria-label={tab === "open" ? "Open requests" : "Archived requests"} aria-busy={source === null}>
      {source === null ? <p className="muted">Loading…</p> : null}
      {source !== null && source.length === 0 ? <Empty tab={tab} config={config} /> : null}
      {source !== null && totals[tab] > source.length ? (
        <p className="notice" role="note">
          Showing the {tab === "open" ? "newest" : "latest"} {source.length} of {totals[tab]} requests;
          the API (<code>/api/approvals/</code>) pages through all of them.
        </p>
      ) : null}
      {source !== null && source.length > 0 && visible.length === 0 ? (
        <p className="empty">No request matches these filters.{" "}
          <button type="button" className="link-button" onClick={() => dispatch({ type: "filters", filters: NO_FILTERS })}>Clear filters</button>
        </p>
      ) : null}
      {groups.map((group) => <FlowGroupSection key={group.flow} group={group} {...props} />)}
      {visible.length > shown ? (
        <button type="button" onClick={() => dispatch({ type: "showMore" })}>
          Show {Math.min(PAGE, visible.length - shown)} more of {visible.length - shown}
        </button>
      ) : null}
    </section>
  );
}
