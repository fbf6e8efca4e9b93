/** The approver's inbox: open requests by flow, filters, decisions (one or many), archive. */
import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent as ReactKeyboardEvent } from "react";
import { ApiError, InboxApi } from "./api";
import { COUNT_EVENT } from "./live";
import { NO_FILTERS, bulkSentence, distinct, flowName, groupByFlow, matches, move, type Filters } from "./model";
import {
  Decisions, Dialog, Due, Icon, InputValues, Outcome, Policy, RunLink, Shortcuts, ShownValues, StartedBy, Waiting, When,
  WhyNotNote,
} from "./parts";
import type { ApprovalRequest, BulkResult, InboxConfig } from "./types";

type Tab = "open" | "archive";
type Verdict = "approve" | "reject";
interface Pending { ids: number[]; decision: Verdict }
interface Summary { decision: Verdict; done: number; total: number; refused: BulkResult[]; titles: Map<number, string> }

const PAGE = 200;
const VERB: Record<Verdict, string> = { approve: "Approve", reject: "Reject" };
const PAST: Record<Verdict, string> = { approve: "Approved", reject: "Rejected" };

/** The request a link names (`/inbox/?request=12`, as in the notification email), or null. */
function linkedRequest(): number | null {
  const id = Number(new URLSearchParams(window.location.search).get("request"));
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

function typing(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

export function Inbox({ config }: { config: InboxConfig }) {
  const api = useMemo(() => new InboxApi(config), [config]);
  const [tab, setTab] = useState<Tab>("open");
  const [open, setOpen] = useState<ApprovalRequest[] | null>(null);
  const [archive, setArchive] = useState<ApprovalRequest[] | null>(null);
  const [totals, setTotals] = useState<Record<Tab, number>>({ open: 0, archive: 0 });
  const [loadError, setLoadError] = useState("");
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [activeId, setActiveId] = useState<number | null>(linkedRequest);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [pending, setPending] = useState<Pending | null>(null);
  const [summary, setSummary] = useState<Summary | null>(null);
  const [help, setHelp] = useState(false);
  const [announce, setAnnounce] = useState("");
  const [shown, setShown] = useState(PAGE);
  const [now, setNow] = useState(() => Date.now());
  const searchRef = useRef<HTMLInputElement>(null);
  const itemRefs = useRef(new Map<number, HTMLElement>());

  const load = useCallback(async (which: Tab) => {
    try {
      const page = which === "open" ? await api.open() : await api.archive();
      (which === "open" ? setOpen : setArchive)(page.results);
      setTotals((current) => ({ ...current, [which]: page.count }));
      setLoadError("");
    } catch (error) {
      setLoadError(error instanceof Error ? error.message : String(error));
    }
    setNow(Date.now());
  }, [api]);

  useEffect(() => { void load("open"); }, [load]);
  useEffect(() => { if (tab === "archive") void load("archive"); }, [tab, load]);
  useEffect(() => {
    const refresh = () => { void load("open"); };
    window.addEventListener(COUNT_EVENT, refresh);
    const tick = setInterval(() => setNow(Date.now()), 30_000);
    return () => { window.removeEventListener(COUNT_EVENT, refresh); clearInterval(tick); };
  }, [load]);

  const source = tab === "open" ? open : archive;
  const visible = useMemo(
    () => (source ?? []).filter((r) => matches(r, filters, now)),
    [source, filters, now],
  );
  const groups = useMemo(() => groupByFlow(visible.slice(0, shown)), [visible, shown]);
  const ordered = useMemo(() => groups.flatMap((g) => g.requests), [groups]);
  const active = ordered.find((r) => r.id === activeId) ?? null;

  useEffect(() => {
    if (ordered.length && !ordered.some((r) => r.id === activeId)) setActiveId(ordered[0]!.id);
  }, [ordered, activeId]);

  // An approver's first look at a request is audited: ask for it once the focus rests.
  useEffect(() => {
    if (tab !== "open" || activeId === null) return;
    const timer = setTimeout(() => {
      api.detail(activeId).then((fresh) => {
        setOpen((list) => list?.map((r) => (r.id === fresh.id ? fresh : r)) ?? list);
      }, () => undefined);
    }, 700);
    return () => clearTimeout(timer);
  }, [api, tab, activeId]);

  const focusItem = useCallback((id: number | undefined) => {
    if (id === undefined) return;
    setActiveId(id);
    requestAnimationFrame(() => itemRefs.current.get(id)?.focus());
  }, []);

  // A link to one request (the notification email's) brings it into view once the list is in.
  const linked = useRef(linkedRequest());
  useEffect(() => {
    if (linked.current === null || !ordered.some((r) => r.id === linked.current)) return;
    const id = linked.current;
    linked.current = null;
    requestAnimationFrame(() => itemRefs.current.get(id)?.scrollIntoView({ block: "center" }));
  }, [ordered]);

  const step = useCallback((delta: number) => {
    const index = ordered.findIndex((r) => r.id === activeId);
    focusItem(ordered[move(index < 0 ? 0 : index, index < 0 ? 0 : delta, ordered.length)]?.id);
  }, [ordered, activeId, focusItem]);

  const toggle = useCallback((id: number) => {
    setSelected((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id); else next.add(id);
      return next;
    });
  }, []);

  const ask = useCallback((decision: Verdict, ids?: number[]) => {
    const decidable = (list: number[]) => list.filter((id) => open?.find((r) => r.id === id)?.may_decide);
    const chosen = ids ?? (selected.size ? [...selected] : active ? [active.id] : []);
    if (tab !== "open" || decidable(chosen).length === 0) {
      setAnnounce(chosen.length ? "You may not decide this request." : "Choose a request first (j and k move).");
      return;
    }
    setSummary(null);
    setPending({ ids: decidable(chosen), decision });
  }, [open, selected, active, tab]);

  const finish = useCallback((decided: number[], message: string) => {
    const index = ordered.findIndex((r) => r.id === activeId);
    const rest = ordered.filter((r) => !decided.includes(r.id));
    setOpen((list) => list?.filter((r) => !decided.includes(r.id)) ?? list);
    setSelected((current) => new Set([...current].filter((id) => !decided.includes(id))));
    setAnnounce(message);
    focusItem(rest[Math.min(Math.max(index, 0), rest.length - 1)]?.id);
  }, [ordered, activeId, focusItem]);

  const submit = useCallback(async (comment: string): Promise<string> => {
    if (pending === null) return "";
    const { ids, decision } = pending;
    const titles = new Map((open ?? []).map((r) => [r.id, r.title] as [number, string]));
    try {
      if (ids.length === 1) {
        await api.decide(ids[0]!, decision, comment);
        setPending(null);
        finish(ids, `${PAST[decision]}: ${titles.get(ids[0]!) ?? ""}`);
      } else {
        const result = await api.decideMany(ids, decision, comment);
        const done = result.results.filter((r) => r.result === "done").map((r) => r.id);
        const refused = result.results.filter((r) => r.result === "refused");
        setPending(null);
        setSummary({ decision, done: result.done, total: result.total, refused, titles });
        finish(done, `${PAST[decision]} ${bulkSentence(result.done, result.total)}.`);
      }
      return "";
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) void load("open");
      return error instanceof Error ? error.message : String(error);
    }
  }, [pending, open, api, finish, load]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (pending || help || typing(event.target)) return;
      const keys: Record<string, () => void> = {
        j: () => step(1), ArrowDown: () => step(1), k: () => step(-1), ArrowUp: () => step(-1),
        a: () => ask("approve"), r: () => ask("reject"),
        x: () => { if (active && tab === "open") toggle(active.id); },
        "?": () => setHelp(true),
        "/": () => searchRef.current?.focus(),
        Escape: () => { setSelected(new Set()); setSummary(null); },
      };
      const action = keys[event.key];
      if (action) { event.preventDefault(); action(); }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [pending, help, step, ask, toggle, active, tab]);

  const flows = useMemo(() => distinct(source ?? [], (r) => [flowName(r)]), [source]);
  const groupNames = useMemo(() => distinct(source ?? [], (r) => r.groups), [source]);
  const fields = useMemo(() => distinct(source ?? [], (r) => r.shown.map((s) => s.field)), [source]);
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);

  return (
    <div className="inbox">
      <div className="inbox-top">
        <div role="tablist" aria-label="Requests" className="tabs">
          {(["open", "archive"] as Tab[]).map((name) => (
            <button key={name} id={`inbox-tab-${name}`} type="button" role="tab" aria-selected={tab === name}
              aria-controls="inbox-panel"
              className={tab === name ? "tab tab--current" : "tab"}
              onClick={() => { setTab(name); setSelected(new Set()); setSummary(null); }}>
              {name === "open" ? `Open${open ? ` (${open.length})` : ""}` : "Archive"}
            </button>
          ))}
        </div>
        <button type="button" className="link-button" onClick={() => setHelp(true)} aria-keyshortcuts="?">
          Keyboard shortcuts (?)
        </button>
      </div>

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

      {selected.size > 0 && tab === "open" ? (
        <div className="bulk-bar" role="region" aria-label="Bulk decision">
          <span>{selected.size} selected</span>
          <button type="button" onClick={() => ask("approve", [...selected])}>Approve {selected.size}…</button>
          <button type="button" className="danger" onClick={() => ask("reject", [...selected])}>Reject {selected.size}…</button>
          <button type="button" className="link-button" onClick={() => setSelected(new Set())}>Clear selection</button>
        </div>
      ) : null}

      {summary ? (
        <div className="bulk-summary" role="status">
          <p><strong>{PAST[summary.decision]}: {bulkSentence(summary.done, summary.total)}.</strong></p>
          {summary.refused.length ? (
            <ul>
              {summary.refused.map((r) => (
                <li key={r.id}>{summary.titles.get(r.id) ?? `Request ${r.id}`}: {r.detail}</li>
              ))}
            </ul>
          ) : null}
          <button type="button" className="link-button" onClick={() => setSummary(null)}>Dismiss</button>
        </div>
      ) : null}

      {loadError ? (
        <p className="error" role="alert">
          Could not load the requests: {loadError}{" "}
          <button type="button" className="link-button" onClick={() => void load(tab)}>Try again</button>
        </p>
      ) : null}

      <div className="inbox-body" role="tabpanel" id="inbox-panel" aria-labelledby={`inbox-tab-${tab}`}>
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
              <button type="button" className="link-button" onClick={() => setFilters(NO_FILTERS)}>Clear filters</button>
            </p>
          ) : null}
          {groups.map((group) => (
            <section key={group.flow} className="flow-group" aria-label={`Flow ${group.flow}`}>
              <h2>
                {tab === "open" ? (
                  <input type="checkbox" aria-label={`Select all ${group.requests.length} of ${group.flow}`}
                    checked={group.requests.every((r) => selected.has(r.id))}
                    onChange={(e) => setSelected((current) => {
                      const next = new Set(current);
                      for (const r of group.requests) if (r.may_decide) { if (e.target.checked) next.add(r.id); else next.delete(r.id); }
                      return next;
                    })} />
                ) : null}
                {group.flow} <span className="muted">({group.requests.length})</span>
              </h2>
              <ol className="requests">
                {group.requests.map((request) => (
                  <li key={request.id}>
                    <Item request={request} tab={tab} now={now} config={config}
                      active={request.id === activeId} selected={selected.has(request.id)}
                      register={(el) => { if (el) itemRefs.current.set(request.id, el); else itemRefs.current.delete(request.id); }}
                      onFocus={() => setActiveId(request.id)} onToggle={() => toggle(request.id)}
                      onDecide={(decision) => ask(decision, [request.id])} />
                  </li>
                ))}
              </ol>
            </section>
          ))}
          {visible.length > shown ? (
            <button type="button" onClick={() => setShown(shown + PAGE)}>
              Show {Math.min(PAGE, visible.length - shown)} more of {visible.length - shown}
            </button>
          ) : null}
        </section>
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
        <DecideDialog pending={pending} titles={open ?? []} onCancel={() => setPending(null)} onSubmit={submit} />
      ) : null}
      {help ? <Shortcuts onClose={() => setHelp(false)} /> : null}
      <div className="visually-hidden" aria-live="polite" role="status">{announce}</div>
    </div>
  );
}

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

interface DetailProps {
  request: ApprovalRequest; tab: Tab; now: number; config: InboxConfig; api: InboxApi;
  onDecided: (id: number, decision: Verdict) => void;
  onHandedOver: (id: number, message: string) => void; onChanged: () => void;
}

function Detail({ request, tab, now, config, api, onDecided, onHandedOver, onChanged }: DetailProps) {
  const [comment, setComment] = useState("");
  const [to, setTo] = useState("");
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const decide = async (decision: Verdict) => {
    setBusy(true);
    try {
      await api.decide(request.id, decision, comment);
      onDecided(request.id, decision);
    } catch (error) {
      setMessage(error instanceof Error ? error.message : String(error));
      setBusy(false);
    }
  };
  const handOver = async (how: "delegate" | "reassign") => {
    const person = to.trim();
    try {
      await (how === "delegate" ? api.delegate : api.reassign).call(api, request.id, person, comment);
      if (how === "delegate") {
        onHandedOver(request.id, `Delegated “${request.title}” to ${person}.`);
      } else {
        setMessage(`Reassigned to ${person}.`);
        onChanged();
      }
    } catch (error) {
      setMessage(error instanceof Error ? error.message : String(error));
    }
  };
  return (
    <div className="detail">
      <h2>{request.title}</h2>
      {request.instructions ? <p className="instructions">{request.instructions}</p> : null}
      {tab === "open" ? <WhyNotNote request={request} /> : null}
      <ShownValues request={request} />
      <InputValues request={request} />
      <dl className="facts">
        <div><dt>Started</dt><dd><StartedBy request={request} now={now} flow={false} /></dd></div>
        <div><dt>Flow</dt><dd>{flowName(request)}{request.context.version !== null ? ` v${request.context.version}` : ""} · <RunLink request={request} runUrl={config.runUrl} /></dd></div>
        <div><dt>Step</dt><dd><code>{request.node}</code> <span className="muted">({request.execution_id})</span></dd></div>
        <div><dt>Who</dt><dd><Policy request={request} /></dd></div>
        <div><dt>Asked</dt><dd><When iso={request.created_at} now={now} /></dd></div>
        {request.due_at && tab === "open" ? <div><dt>Due</dt><dd><Due request={request} now={now} /></dd></div> : null}
        {tab === "archive" && request.closed_at ? <div><dt>Closed</dt><dd><When iso={request.closed_at} now={now} /></dd></div> : null}
        {tab === "archive" ? <div><dt>Outcome</dt><dd><Outcome request={request} /></dd></div> : null}
      </dl>
      <Decisions request={request} now={now} />
      {tab === "open" && request.may_decide ? (
        <form className="decide-inline" onSubmit={(e) => e.preventDefault()}>
          <label htmlFor={`comment-${request.id}`}>Comment (optional)</label>
          <textarea id={`comment-${request.id}`} rows={3} maxLength={2000} value={comment}
            onChange={(e) => setComment(e.target.value)} />
          <div className="actions">
            <button type="button" disabled={busy} onClick={() => void decide("approve")}><Icon name="check" /> Approve</button>
            <button type="button" disabled={busy} className="danger" onClick={() => void decide("reject")}><Icon name="cross" /> Reject</button>
          </div>
          <details className="delegate">
            <summary>Delegate to another approver</summary>
            <label htmlFor={`to-${request.id}`}>User name</label>
            <input id={`to-${request.id}`} type="text" value={to} onChange={(e) => setTo(e.target.value)} />
            <button type="button" disabled={!to.trim()} onClick={() => void handOver("delegate")}>Delegate</button>
          </details>
        </form>
      ) : null}
      {tab === "open" && config.admin ? (
        <details className="delegate">
          <summary>Reassign to anyone (admins)</summary>
          <label htmlFor={`reassign-${request.id}`}>User name</label>
          <input id={`reassign-${request.id}`} type="text" value={to} onChange={(e) => setTo(e.target.value)} />
          <button type="button" disabled={!to.trim()} onClick={() => void handOver("reassign")}>Reassign</button>
        </details>
      ) : null}
      {message ? <p role="status" className="message-inline">{message}</p> : null}
    </div>
  );
}

interface DecideDialogProps {
  pending: Pending; titles: ApprovalRequest[];
  onCancel: () => void; onSubmit: (comment: string) => Promise<string>;
}

function DecideDialog({ pending, titles, onCancel, onSubmit }: DecideDialogProps) {
  const [comment, setComment] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const count = pending.ids.length;
  const first = titles.find((r) => r.id === pending.ids[0]);
  const heading = count === 1 ? `${VERB[pending.decision]} “${first?.title ?? ""}”` : `${VERB[pending.decision]} ${count} requests`;
  const send = async () => {
    setBusy(true);
    setError(await onSubmit(comment));
    setBusy(false);
  };
  const onKey = (event: ReactKeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); if (!busy) void send(); }
  };
  return (
    <Dialog title={heading} onClose={onCancel} labelId="decide-title">
      <form method="dialog" onSubmit={(e) => { e.preventDefault(); void send(); }}>
        <label htmlFor="decide-comment">Comment (optional)</label>
        <textarea id="decide-comment" autoFocus rows={3} maxLength={2000} value={comment}
          onChange={(e) => setComment(e.target.value)} onKeyDown={onKey}
          aria-describedby="decide-hint" />
        <p id="decide-hint" className="muted">Enter sends; Shift+Enter starts a new line; Escape cancels.
          {count > 1 ? " Each request is decided on its own; you will see what was done and what was refused." : ""}</p>
        {error ? <p className="error" role="alert">{error}</p> : null}
        {busy && count > 1 ? <p role="status">Deciding {count}…</p> : null}
        <div className="actions">
          <button type="submit" disabled={busy} className={pending.decision === "reject" ? "danger" : ""}>
            {VERB[pending.decision]}{count > 1 ? ` ${count}` : ""}
          </button>
          <button type="button" className="secondary" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}
