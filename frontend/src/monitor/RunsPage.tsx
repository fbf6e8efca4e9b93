/** The Runs page: live counts, filters, search, the list, and starting a run. */

import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ApiError, getJson, postJson, socketUrl } from "./api";
import { CancelDialog, refusalOf } from "./CancelDialog";
import {
  type BulkProgress,
  type BulkResult,
  bulkBlocked,
  bulkResults,
  chunks,
  failedChunk,
  progressText,
  type RunAction,
} from "./runActions";
import { NO_FILTERS, parseSearch, type RunFilters, runsQuery, type Search } from "./runsQuery";
import { backoffDelay, Sequencer } from "./sequence";
import { type PublishedFlow, StartRunForm } from "./StartRunForm";
import { isFinished, type Paged, RUN_STATUSES, type RunRow } from "./types";
import { RelativeTime, Shortcuts, StatusPill, useNow } from "./ui";

const RUNS_SHORTCUTS: ReadonlyArray<[string, string]> = [
  ["/", "goes to the search box"],
  ["n", "starts a run"],
  ["Escape", "closes the start form or this list"],
  ["?", "shows this list"],
];

export interface Viewer {
  username: string;
  groups: string[];
  can_start: boolean;
  can_administer: boolean;
}

export interface RunsPageData {
  viewer: Viewer;
  flows: PublishedFlow[];
  start: string;
}

const PAGE_SIZE = 50;
const POLL_MS = 5000;

type Counts = Partial<Record<string, number>>;
type Live = "connecting" | "live" | "polling";

async function fetchCounts(): Promise<Counts> {
  const entries = await Promise.all(
    RUN_STATUSES.map(async (status) => {
      const page = (await getJson(`/api/runs/?status=${status}&limit=1`)) as Paged<RunRow>;
      return [status, page.count] as const;
    }),
  );
  return Object.fromEntries(entries);
}

interface Listing {
  rows: RunRow[];
  total: number;
  note: string;
}

async function fetchListing(filters: RunFilters, search: Search, offset: number): Promise<Listing> {
  if (search.kind === "id") {
    try {
      return { rows: [(await getJson(`/api/runs/${search.id}/`)) as RunRow], total: 1, note: "" };
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return { rows: [], total: 0, note: "" };
      throw error;
    }
  }
  const params = runsQuery(filters, search);
  if (search.kind === "idPrefix") {
    params.set("limit", "500");
    const page = (await getJson(`/api/runs/?${params}`)) as Paged<RunRow>;
    const rows = page.results.filter((run) => run.id.startsWith(search.prefix));
    const note = page.count > 500 ? "Matched against the 500 newest runs; give the whole id to find older ones." : "";
    return { rows, total: rows.length, note };
  }
  params.set("limit", String(PAGE_SIZE));
  params.set("offset", String(offset));
  const page = (await getJson(`/api/runs/?${params}`)) as Paged<RunRow>;
  return { rows: page.results, total: page.count, note: "" };
}

function CountsBar({ counts, live }: { counts: Counts; live: Live }) {
  const total = RUN_STATUSES.reduce((sum, status) => sum + (counts[status] ?? 0), 0);
  return (
    <div className="counts" aria-label="Runs by status" role="group">
      <span className="counts__total">{total === 1 ? "1 run" : `${total} runs`}</span>
      {RUN_STATUSES.map((status) => (
        <span key={status} className="counts__item" data-status={status}>
          <StatusPill status={status} /> <strong>{counts[status] ?? 0}</strong>
        </span>
      ))}
      <span className={`live-badge live-badge--${live}`} title="How this page keeps up to date">
        {live === "live" ? "● live" : live === "polling" ? "↻ refreshing every 5 s" : "connecting…"}
      </span>
    </div>
  );
}

interface FiltersProps {
  flows: readonly PublishedFlow[];
  value: RunFilters;
  onChange: (next: RunFilters) => void;
  searchError: string;
  canWaitOnMe: boolean;
}

function Filters({ flows, value, onChange, searchError, canWaitOnMe }: FiltersProps) {
  const [search, setSearch] = useState(value.search);
  const set = <K extends keyof RunFilters>(key: K, next: RunFilters[K]) => onChange({ ...value, [key]: next });
  function submit(event: FormEvent) {
    event.preventDefault();
    set("search", search);
  }
  return (
    <div className="filters" role="search" aria-label="Filter runs">
      <form className="filters__search" onSubmit={submit}>
        <label htmlFor="runs-search">Search</label>
        <div className="inline">
          <input
            id="runs-search"
            type="search"
            placeholder="run id or state=field:value"
            value={search}
            onChange={(event) => setSearch(event.target.value)}
            aria-invalid={searchError !== ""}
            aria-describedby={searchError === "" ? undefined : "runs-search-error"}
          />
          <button type="submit">Search</button>
        </div>
        {searchError !== "" && (
          <p className="error field-error" id="runs-search-error">
            {searchError}
          </p>
        )}
      </form>
      <div className="filters__row">
        <div>
          <label htmlFor="runs-flow">Flow</label>
          <select id="runs-flow" value={value.flow} onChange={(event) => set("flow", event.target.value)}>
            <option value="">any flow</option>
            {flows.map((flow) => (
              <option key={flow.slug} value={flow.slug}>
                {flow.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="runs-status">Status</label>
          <select
            id="runs-status"
            value={value.status}
            onChange={(event) => set("status", event.target.value)}
          >
            <option value="">any status</option>
            {RUN_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="runs-started-by">Started by</label>
          <input
            id="runs-started-by"
            type="text"
            placeholder="user name"
            value={value.startedBy}
            onChange={(event) => set("startedBy", event.target.value)}
          />
        </div>
        <div>
          <label htmlFor="runs-after">Created from</label>
          <input id="runs-after" type="date" value={value.createdAfter} onChange={(event) => set("createdAfter", event.target.value)} />
        </div>
        <div>
          <label htmlFor="runs-before">Created until</label>
          <input id="runs-before" type="date" value={value.createdBefore} onChange={(event) => set("createdBefore", event.target.value)} />
        </div>
        {canWaitOnMe && (
          <div className="check">
            <input
              id="runs-mine"
              type="checkbox"
              checked={value.waitingOnMe}
              onChange={(event) => set("waitingOnMe", event.target.checked)}
            />
            <label htmlFor="runs-mine">Waiting on me</label>
          </div>
        )}
      </div>
    </div>
  );
}

interface Selection {
  /** The selected runs by id, as last listed (a run on another page keeps its row). */
  runs: ReadonlyMap<string, RunRow>;
  toggle: (run: RunRow) => void;
  togglePage: (rows: readonly RunRow[], on: boolean) => void;
}

/** The header's select-all box: checked when every run on the page is, mixed when some are. */
function SelectPage({ rows, selection }: { rows: readonly RunRow[]; selection: Selection }) {
  const box = useRef<HTMLInputElement>(null);
  const chosen = rows.filter((run) => selection.runs.has(run.id)).length;
  const all = rows.length > 0 && chosen === rows.length;
  useEffect(() => {
    if (box.current !== null) box.current.indeterminate = chosen > 0 && !all;
  }, [chosen, all]);
  return (
    <input
      ref={box}
      type="checkbox"
      aria-label={`Select all ${rows.length} runs on this page`}
      checked={all}
      onChange={() => selection.togglePage(rows, !all)}
    />
  );
}

function RunsTable({ rows, now, selection }: { rows: readonly RunRow[]; now: number; selection: Selection | null }) {
  return (
    <div className="table-wrap">
      <table className="runs-table">
        <thead>
          <tr>
            {selection !== null && (
              <th scope="col" className="select">
                <SelectPage rows={rows} selection={selection} />
              </th>
            )}
            <th scope="col">Run</th>
            <th scope="col">Flow</th>
            <th scope="col">Status</th>
            <th scope="col" className="hide-narrow">Started by</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((run) => (
            <tr key={run.id} data-run={run.id} className={selection?.runs.has(run.id) ? "is-selected" : undefined}>
              {selection !== null && (
                <td className="select">
                  <input
                    type="checkbox"
                    aria-label={`Select run ${run.id.slice(0, 8)} (${run.label}, ${run.status})`}
                    checked={selection.runs.has(run.id)}
                    onChange={() => selection.toggle(run)}
                  />
                </td>
              )}
              <td>
                <a href={`/runs/${run.id}/`} title={run.id}>
                  <code>{run.id.slice(0, 8)}</code>
                </a>
              </td>
              <td className="wrap">{run.label}</td>
              <td>
                <StatusPill status={run.status} />
              </td>
              <td className="hide-narrow">{run.started_by ?? "command line"}</td>
              <td>
                <RelativeTime iso={run.created_at} now={now} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The selected runs' statuses, read from the newest listing where a run is on it. */
function selectedStatuses(selected: ReadonlyMap<string, RunRow>, rows: readonly RunRow[]): string[] {
  const listed = new Map(rows.map((run) => [run.id, run.status]));
  return [...selected.values()].map((run) => listed.get(run.id) ?? run.status);
}

function BulkBar({ statuses, busy, onCancel, onRetry, onClear }: {
  statuses: readonly string[];
  busy: boolean;
  onCancel: () => void;
  onRetry: () => void;
  onClear: () => void;
}) {
  const blocked = (action: RunAction) => (busy ? "A bulk action is in progress." : bulkBlocked(action, statuses));
  const button = (action: RunAction, label: string, onClick: () => void, className: string) => {
    const why = blocked(action);
    return (
      <button type="button" className={className} aria-disabled={why !== ""} title={why === "" ? undefined : why}
        onClick={() => { if (why === "") onClick(); }}>
        {label}
      </button>
    );
  };
  return (
    <div className="bulk-bar" role="region" aria-label="Actions on the selected runs">
      <span className="bulk-bar__count" role="status">
        {statuses.length === 1 ? "1 run selected" : `${statuses.length} runs selected`}
      </span>
      {button("cancel", "Cancel selected…", onCancel, "danger")}
      {button("retry", "Retry selected", onRetry, "secondary")}
      <button type="button" className="link" onClick={onClear}>
        Clear the selection
      </button>
    </div>
  );
}

function BulkResults({ progress, labels, onDismiss }: {
  progress: BulkProgress;
  labels: ReadonlyMap<string, string>;
  onDismiss: () => void;
}) {
  const refused = progress.results.filter((result) => !result.ok);
  return (
    <section className="bulk-results" aria-labelledby="bulk-results-h">
      <div className="bulk-results__head">
        <h2 id="bulk-results-h" className="visually-hidden">Bulk action results</h2>
        <p role="status" aria-live="polite">{progressText(progress)}</p>
        {progress.finished && (
          <button type="button" className="secondary" onClick={onDismiss}>Dismiss</button>
        )}
      </div>
      <progress max={progress.total} value={progress.results.length} aria-label="Runs answered" />
      {progress.failure !== "" && <p className="error" role="alert">{progress.failure}</p>}
      {refused.length > 0 && (
        <ul aria-label="Refused runs">
          {refused.map((result) => (
            <li key={result.id} className="error">
              <a href={`/runs/${result.id}/`}><code>{result.id.slice(0, 8)}</code></a>
              {labels.has(result.id) && <> ({labels.get(result.id)})</>}: {result.error}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Send a bulk action in small requests, reporting each request's answers as they come. */
async function sendBulk(action: RunAction, ids: readonly string[], reason: string,
  report: (update: (current: BulkProgress) => BulkProgress) => void): Promise<void> {
  for (const part of chunks(ids)) {
    let answered: BulkResult[];
    let failure = "";
    try {
      answered = bulkResults(await postJson("/api/runs/bulk/", action === "cancel" ? { action, ids: part, reason } : { action, ids: part }));
    } catch (error) {
      failure = error instanceof ApiError ? error.message : String(error);
      answered = failedChunk(part, `the request failed: ${failure}`);
    }
    report((current) => ({ ...current, results: [...current.results, ...answered], failure: failure === "" ? current.failure : `A request failed: ${failure}` }));
  }
  report((current) => ({ ...current, finished: true }));
}

/** The selection and the bulk actions on it. */
function useBulk(rows: readonly RunRow[], reload: () => void) {
  const [selected, setSelected] = useState<ReadonlyMap<string, RunRow>>(() => new Map());
  const [progress, setProgress] = useState<BulkProgress | null>(null);
  const [confirming, setConfirming] = useState(false);
  const selection: Selection = useMemo(() => ({
    runs: selected,
    toggle: (run) => setSelected((current) => {
      const next = new Map(current);
      if (next.has(run.id)) next.delete(run.id);
      else next.set(run.id, run);
      return next;
    }),
    togglePage: (page, on) => setSelected((current) => {
      const next = new Map(current);
      for (const run of page) {
        if (on) next.set(run.id, run);
        else next.delete(run.id);
      }
      return next;
    }),
  }), [selected]);
  const labels = useMemo(() => new Map([...selected.values(), ...rows].map((run) => [run.id, run.label])), [selected, rows]);
  const [shownLabels, setShownLabels] = useState<ReadonlyMap<string, string>>(() => new Map());
  const start = async (action: RunAction, reason = ""): Promise<void> => {
    const ids = [...selected.keys()];
    setShownLabels(labels);
    setProgress({ action, total: ids.length, results: [], failure: "", finished: false });
    await sendBulk(action, ids, reason, (update) => setProgress((current) => (current === null ? current : update(current))));
    setSelected(new Map());
    reload();
  };
  return { selection, progress, setProgress, confirming, setConfirming, start, shownLabels };
}

/** Follow /ws/runs/: counts and changed rows; poll while the socket is down. */
function useRunsSocket(onCounts: (counts: Counts) => void, onRuns: (rows: RunRow[]) => void, poll: () => void): Live {
  const [live, setLive] = useState<Live>("connecting");
  const handlers = useRef({ onCounts, onRuns, poll });
  handlers.current = { onCounts, onRuns, poll };
  useEffect(() => {
    let socket: WebSocket | null = null;
    let attempt = 0;
    let retry = 0;
    let pollTimer = 0;
    let stopped = false;
    const sequencer = new Sequencer(false);
    const startPolling = () => {
      if (pollTimer === 0) pollTimer = window.setInterval(() => handlers.current.poll(), POLL_MS);
    };
    const stopPolling = () => {
      window.clearInterval(pollTimer);
      pollTimer = 0;
    };
    const connect = () => {
      sequencer.reset();
      socket = new WebSocket(socketUrl("/ws/runs/"));
      socket.onopen = () => {
        attempt = 0;
        stopPolling();
        setLive("live");
        handlers.current.poll(); // catch up with what changed while disconnected
      };
      socket.onmessage = (message) => {
        let body: { type?: string; seq?: number; counts?: Counts; runs?: RunRow[] };
        try {
          body = JSON.parse(String(message.data));
        } catch {
          return;
        }
        const verdict = sequencer.accept({ type: body.type ?? "", seq: body.seq ?? Number.NaN });
        if (verdict === "resync") handlers.current.poll();
        if (verdict === "ignore") return;
        if (body.type === "counts" && body.counts) handlers.current.onCounts(body.counts);
        if (body.type === "runs" && Array.isArray(body.runs)) handlers.current.onRuns(body.runs);
      };
      socket.onclose = (event) => {
        if (stopped) return;
        setLive("polling");
        startPolling();
        if (event.code === 4401 || event.code === 4403) return;
        retry = window.setTimeout(connect, backoffDelay(attempt++, 30_000));
      };
    };
    connect();
    return () => {
      stopped = true;
      window.clearTimeout(retry);
      stopPolling();
      socket?.close();
    };
  }, []);
  return live;
}

/** What a bulk cancel stops, counting the selected runs that already finished. */
function cancelConsequence(statuses: readonly string[]): string {
  const finished = statuses.filter((status) => isFinished(status)).length;
  const skipped = finished === 0 ? "" : ` ${finished === 1 ? "1 selected run has" : `${finished} selected runs have`} finished and will be refused.`;
  return `Every step still running or waiting in these runs stops, and their open approval requests close. This cannot be undone.${skipped}`;
}

/** The page. */
export function RunsPage({ data }: { data: RunsPageData }) {
  const now = useNow();
  const [filters, setFilters] = useState<RunFilters>(NO_FILTERS);
  const [offset, setOffset] = useState(0);
  const [listing, setListing] = useState<Listing | null>(null);
  const [error, setError] = useState("");
  const [counts, setCounts] = useState<Counts>({});
  const [starting, setStarting] = useState(data.start !== "" && data.viewer.can_start);
  const [help, setHelp] = useState(false);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.target as HTMLElement).closest("input, textarea, select, dialog")) return;
      if (event.key === "?") setHelp((open) => !open);
      else if (event.key === "Escape") {
        setHelp(false);
        setStarting(false);
      } else if (event.key === "n" && data.viewer.can_start) {
        event.preventDefault();
        setStarting(true);
      } else if (event.key === "/") {
        event.preventDefault();
        document.getElementById("runs-search")?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [data.viewer.can_start]);
  const search = useMemo(() => parseSearch(filters.search), [filters.search]);
  const searchError = search.kind === "invalid" ? search.message : "";
  const generation = useRef(0);

  const load = useCallback(async () => {
    if (search.kind === "invalid") return;
    const mine = ++generation.current;
    try {
      const next = await fetchListing(filters, search, offset);
      if (mine === generation.current) {
        setListing(next);
        setError("");
      }
    } catch (failure) {
      if (mine === generation.current) setError(failure instanceof Error ? failure.message : String(failure));
    }
  }, [filters, search, offset]);

  const refresh = useCallback(() => {
    void load();
    fetchCounts().then(setCounts, () => undefined);
  }, [load]);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    fetchCounts().then(setCounts, () => undefined);
  }, []);

  const pendingReload = useRef(0);
  const onRuns = useCallback(
    (changed: RunRow[]) => {
      setListing((current) => {
        if (current === null) return current;
        const byId = new Map(changed.map((run) => [run.id, run]));
        const unknown = changed.some((run) => !current.rows.some((row) => row.id === run.id));
        if (unknown) {
          window.clearTimeout(pendingReload.current);
          pendingReload.current = window.setTimeout(() => void load(), 300);
        }
        return { ...current, rows: current.rows.map((row) => byId.get(row.id) ?? row) };
      });
    },
    [load],
  );
  const live = useRunsSocket(setCounts, onRuns, refresh);

  const [cleared, setCleared] = useState(0);
  const changeFilters = (next: RunFilters) => {
    setFilters(next);
    setOffset(0);
  };
  const clearFilters = () => {
    changeFilters(NO_FILTERS);
    setCleared((count) => count + 1); // remounts the filters, emptying the search box too
  };
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);
  const rows = listing?.rows ?? [];
  const paged = search.kind !== "id" && search.kind !== "idPrefix";
  const bulk = useBulk(rows, refresh);
  const admin = data.viewer.can_administer;
  const statuses = selectedStatuses(bulk.selection.runs, rows);

  return (
    <div className="runs-page">
      <div className="toolbar">
        <CountsBar counts={counts} live={live} />
        <span className="toolbar__actions">
          <button type="button" className="link" onClick={() => setHelp(true)}>
            ? shortcuts
          </button>
          {data.viewer.can_start && !starting && (
            <button type="button" onClick={() => setStarting(true)}>
              Start run
            </button>
          )}
        </span>
      </div>
      {starting && <StartRunForm flows={data.flows} initialFlow={data.start} onClose={() => setStarting(false)} />}
      <Filters
        key={cleared}
        flows={data.flows}
        value={filters}
        onChange={changeFilters}
        searchError={searchError}
        canWaitOnMe={data.viewer.groups.length > 0}
      />
      {error !== "" && (
        <p className="error" role="alert">
          Could not load runs: {error}
        </p>
      )}
      {listing === null && error === "" && <p className="muted">Loading runs…</p>}
      {listing !== null && rows.length === 0 && (
        <p className="empty">
          {filtered ? (
            <>
              No runs match these filters.{" "}
              <button type="button" className="link" onClick={clearFilters}>
                Clear the filters
              </button>
            </>
          ) : (
            "No runs yet. Start one from a published flow."
          )}
        </p>
      )}
      {admin && bulk.progress !== null && (
        <BulkResults progress={bulk.progress} labels={bulk.shownLabels} onDismiss={() => bulk.setProgress(null)} />
      )}
      {admin && statuses.length > 0 && (
        <BulkBar
          statuses={statuses}
          busy={bulk.progress !== null && !bulk.progress.finished}
          onCancel={() => bulk.setConfirming(true)}
          onRetry={() => void bulk.start("retry")}
          onClear={() => bulk.selection.togglePage([...bulk.selection.runs.values()], false)}
        />
      )}
      {rows.length > 0 && <RunsTable rows={rows} now={now} selection={admin ? bulk.selection : null} />}
      {admin && (
        <CancelDialog
          open={bulk.confirming}
          title={statuses.length === 1 ? "Cancel 1 selected run?" : `Cancel ${statuses.length} selected runs?`}
          consequence={cancelConsequence(statuses)}
          confirm={statuses.length === 1 ? "Cancel the run" : `Cancel ${statuses.length} runs`}
          onClose={() => bulk.setConfirming(false)}
          onConfirm={async (reason) => {
            bulk.setConfirming(false);
            try {
              await bulk.start("cancel", reason);
              return null;
            } catch (error) {
              return refusalOf(error);
            }
          }}
        />
      )}
      {listing !== null && listing.note !== "" && <p className="muted">{listing.note}</p>}
      {listing !== null && paged && listing.total > PAGE_SIZE && (
        <nav className="pager" aria-label="Pages of runs">
          <button type="button" className="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
            ← Newer
          </button>
          <span>
            {offset + 1}–{Math.min(offset + PAGE_SIZE, listing.total)} of {listing.total}
          </span>
          <button
            type="button"
            className="secondary"
            disabled={offset + PAGE_SIZE >= listing.total}
            onClick={() => setOffset(offset + PAGE_SIZE)}
          >
            Older →
          </button>
        </nav>
      )}
      <Shortcuts open={help} onClose={() => setHelp(false)} items={RUNS_SHORTCUTS} />
    </div>
  );
}
