/** The inbox's controls above the list: the tabs, the filters, the bulk bar and a bulk decision's summary. */
import { type Dispatch, type RefObject, useMemo } from "react";
import { type InboxAction, type InboxState, PAST, type Tab, type Verdict } from "./inboxState";
import { NO_FILTERS, bulkSentence, distinct, flowName, type Filters } from "./model";

interface ControlProps { state: InboxState; dispatch: Dispatch<InboxAction> }

/** The Open and Archive tabs, and the button that shows the shortcuts. */
export function InboxTabs({ state, dispatch }: ControlProps) {
  const { tab, open } = state;
  return (
    <div className="inbox-top">
      <div role="tablist" aria-label="Requests" className="tabs">
        {(["open", "archive"] as Tab[]).map((name) => (
          <button key={name} id={`inbox-tab-${name}`} type="button" role="tab" aria-selected={tab === name}
            aria-controls="inbox-panel"
            className={tab === name ? "tab tab--current" : "tab"}
            onClick={() => dispatch({ type: "tab", tab: name })}>
            {name === "open" ? `Open${open ? ` (${open.length})` : ""}` : "Archive"}
          </button>
        ))}
      </div>
      <button type="button" className="link-button" onClick={() => dispatch({ type: "help", shown: true })} aria-keyshortcuts="?">
        Keyboard shortcuts (?)
      </button>
    </div>
  );
}

/** The filters: search, flow, group, due (open tab), a shown field and its value. */
export function InboxFilters({ state, dispatch, source, searchRef }: ControlProps & {
  source: InboxState["open"]; searchRef: RefObject<HTMLInputElement | null>;
}) {
  const { tab, filters } = state;
  const setFilters = (next: Filters) => dispatch({ type: "filters", filters: next });
  const flows = useMemo(() => distinct(source ?? [], (r) => [flowName(r)]), [source]);
  const groupNames = useMemo(() => distinct(source ?? [], (r) => r.groups), [source]);
  const fields = useMemo(() => distinct(source ?? [], (r) => r.shown.map((s) => s.field)), [source]);
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);
  return (
    <form className="filters" role="search" aria-label="Filter requests" onSubmit={(e) => e.preventDefault()}>
      <div className="filter">
        <label htmlFor="filter-search">Search</label>
        <input id="filter-search" ref={searchRef} type="search" value={filters.search} placeholder="title, value, node…"
          aria-keyshortcuts="/" onChange={(e) => setFilters({ ...filters, search: e.target.value })}
          onKeyDown={(e) => { if (e.key === "Escape") (e.target as HTMLInputElement).blur(); }} />
      </div>
      <div className="filter">
        <label htmlFor="filter-flow">Flow</label>
        <select id="filter-flow" value={filters.flow} onChange={(e) => setFilters({ ...filters, flow: e.target.value })}>
          <option value="">All flows</option>
          {flows.map((f) => <option key={f} value={f}>{f}</option>)}
        </select>
      </div>
      <div className="filter">
        <label htmlFor="filter-group">Group</label>
        <select id="filter-group" value={filters.group} onChange={(e) => setFilters({ ...filters, group: e.target.value })}>
          <option value="">All groups</option>
          {groupNames.map((g) => <option key={g} value={g}>{g}</option>)}
        </select>
      </div>
      {tab === "open" ? (
        <div className="filter">
          <label htmlFor="filter-due">Due</label>
          <select id="filter-due" value={filters.due} onChange={(e) => setFilters({ ...filters, due: e.target.value as Filters["due"] })}>
            <option value="any">Any time</option>
            <option value="overdue">Overdue</option>
            <option value="due">Due later</option>
            <option value="none">No due date</option>
          </select>
        </div>
      ) : null}
      <div className="filter">
        <label htmlFor="filter-field">Shown field</label>
        <select id="filter-field" value={filters.field} onChange={(e) => setFilters({ ...filters, field: e.target.value })}>
          <option value="">Any field</option>
          {fields.map((f) => <option key={f} value={f}>{f}</option>)}
        </select>
      </div>
      {filters.field ? (
        <div className="filter">
          <label htmlFor="filter-value">Value contains</label>
          <input id="filter-value" type="text" value={filters.fieldValue}
            onChange={(e) => setFilters({ ...filters, fieldValue: e.target.value })} />
        </div>
      ) : null}
      {filtered ? (
        <button type="button" className="link-button" onClick={() => setFilters(NO_FILTERS)}>Clear filters</button>
      ) : null}
    </form>
  );
}

/** Approve or reject the selected requests at once (open tab, something selected). */
export function BulkBar({ state, dispatch, ask }: ControlProps & { ask: (decision: Verdict, ids?: number[]) => void }) {
  const { selected, tab } = state;
  if (!(selected.size > 0 && tab === "open")) return null;
  return (
    <div className="bulk-bar" role="region" aria-label="Bulk decision">
      <span>{selected.size} selected</span>
      <button type="button" onClick={() => ask("approve", [...selected])}>Approve {selected.size}…</button>
      <button type="button" className="danger" onClick={() => ask("reject", [...selected])}>Reject {selected.size}…</button>
      <button type="button" className="link-button" onClick={() => dispatch({ type: "clearSelection" })}>Clear selection</button>
    </div>
  );
}

/** What a bulk decision did, with each refusal, until dismissed. */
export function BulkSummary({ state, dispatch }: ControlProps) {
  const { summary } = state;
  if (!summary) return null;
  return (
    <div className="bulk-summary" role="status">
      <p><strong>{PAST[summary.decision]}: {bulkSentence(summary.done, summary.total)}.</strong></p>
      {summary.refused.length ? (
        <ul>
          {summary.refused.map((r) => (
            <li key={r.id}>{summary.titles.get(r.id) ?? `Request ${r.id}`}: {r.detail}</li>
          ))}
        </ul>
      ) : null}
      <button type="button" className="link-button" onClick={() => dispatch({ type: "dismiss" })}>Dismiss</button>
    </div>
  );
}
