/** The run view: the graph colored live, the execution tree, the inspector, the timeline, actions. */

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { FlowError, FlowView } from "../FlowView";
import { COLOR_CUES, COLORS, type Color, colorClass } from "../graph/colors";
import { MAIN_GRAPH, nodeAtPath } from "../graph/nested";
import { GraphFormatError, parseGraph } from "../graph/parse";
import type { GraphDocument } from "../graph/types";
import { CANVAS_ZOOM_FLOOR } from "../graph/zoom";
import { ReasonText } from "../nodes/ReasonText";
import { ApiError, getJson, postJson } from "./api";
import { AdminActions } from "./AdminActions";
import {
  buildExecutionTree,
  type Execution,
  type ExecutionStatus,
  type ExecutionTree,
  executionTitle,
  isWithin,
} from "./executions";
import { type ExecutionView, ExecutionViewFollower, fetchExecutionView, type ViewResult } from "./executionView";
import { barGeometry, type ServerStatuses, timeline } from "./gantt";
import { ExecutionTreePanel, reasonBeside, sentence } from "./ExecutionTreePanel";
import { describeActivation, gatherActivations } from "./gather";
import type { Viewer } from "./RunsPage";
import { RowDetails, Votes, WhyNotHere, type ApprovalWhy } from "./InspectorParts";
import { StateWrites, writesVersion } from "./StateWrites";
import { absoluteTime, durationText } from "./time";
import { isFinished, type RunPicture, type TraceEvent } from "./types";
import { RelativeTime, Shortcuts, StatusPill, useNow, VirtualList } from "./ui";
import { shownVotes } from "./votes";
import { useRunLive, useTrace } from "./useRunLive";
import { FrameOnLive } from "./FrameOnLive";
import { liveNodeIds } from "./framing";

const RUN_SHORTCUTS: ReadonlyArray<[string, string]> = [
  ["Tab", "moves between nodes and controls; a focused node shows its reason"],
  ["Enter", "on a node opens the inspector; on a subflow's show/hide button, opens or closes its steps"],
  ["Escape", "closes the inspector or this list"],
  ["l", "returns to the live view and follows the live work"],
  ["?", "shows this list"],
];

export interface RunViewData {
  viewer: Viewer;
  run: {
    id: string;
    label: string;
    status: string;
    flow: string | null;
    version: number | null;
    started_by: string | null;
    created_at: string;
    error: string;
  };
  graph: unknown;
  /** Every graph the run executes, by key: `main` and each subflow's `slug@version`. */
  graphs?: Record<string, unknown>;
}

const NO_COLORS: Readonly<Record<string, Color>> = {};
const NO_REASONS: Readonly<Record<string, string>> = {};
/** Fit the graph no smaller than this: labels stay readable (UI.md) and a phone pans. */
const FIT_MIN_ZOOM = CANVAS_ZOOM_FLOOR;
const GANTT_ROW = 22;

function Legend() {
  return (
    <ul className="legend" aria-label="What the colors mean">
      {COLORS.map((color) => (
        <li key={color} className={`braid-legend__item ${colorClass(color)}`}>
          <span aria-hidden="true">{COLOR_CUES[color].icon}</span> {COLOR_CUES[color].text}
        </li>
      ))}
    </ul>
  );
}

interface OpenApproval {
  id: number;
  run: string;
  node: string;
  execution_id: string;
  groups: string[];
  title: string;
  status: string;
  may_decide: boolean;
  why_not: ApprovalWhy | null;
}

/** A waiting approval's open requests at this node, with Approve/Reject for members of its groups. */
function DecideHere({ runId, node, groups, version }: { runId: string; node: string; groups: readonly string[]; version: unknown }) {
  const [requests, setRequests] = useState<OpenApproval[] | null>(null);
  const [notes, setNotes] = useState<Record<number, { ok: boolean; text: string }>>({});
  const [comment, setComment] = useState("");
  useEffect(() => {
    let stopped = false;
    getJson("/api/approvals/?limit=500").then(
      (body) => {
        const all = (body as { results: OpenApproval[] }).results;
        if (!stopped) setRequests(all.filter((r) => r.run === runId && r.node === node && r.status === "open"));
      },
      () => {
        if (!stopped) setRequests([]);
      },
    );
    return () => {
      stopped = true;
    };
  }, [runId, node, version]);
  if (requests === null || requests.length === 0) return null;
  async function decide(request: OpenApproval, decision: "approve" | "reject") {
    try {
      await postJson(`/api/approvals/${request.id}/decide/`, { decision, comment });
      setNotes((current) => ({ ...current, [request.id]: { ok: true, text: `Recorded: ${decision}.` } }));
    } catch (error) {
      const text = `Refused: ${error instanceof ApiError ? error.message : String(error)}`;
      setNotes((current) => ({ ...current, [request.id]: { ok: false, text } }));
    }
  }
  return (
    <>
      <h3>Open approval</h3>
      {requests.some((request) => request.may_decide) && (
        <>
          <label htmlFor="decide-comment" className="visually-hidden">
            Comment with the decision
          </label>
          <input id="decide-comment" type="text" placeholder="comment (optional)" value={comment} onChange={(event) => setComment(event.target.value)} />
        </>
      )}
      <ul className="decide-list">
        {requests.map((request) => {
          const allowed = request.may_decide;
          const note = notes[request.id];
          return (
            <li key={request.id}>
              <div>
                {request.title} <code>{request.execution_id}</code>
              </div>
              {allowed ? (
                <div className="admin-actions">
                  <button type="button" onClick={() => void decide(request, "approve")}>Approve</button>
                  <button type="button" className="secondary" onClick={() => void decide(request, "reject")}>Reject</button>
                </div>
              ) : (
                <WhyNotHere why={request.why_not} groups={request.groups} viewer={groups} />
              )}
              {note !== undefined && <p className={note.ok ? "muted" : "error"} role="status">{note.text}</p>}
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** The declared slots of the node at `path` when it is a gather, else null. */
function gatherSlots(doc: GraphDocument | null, graphs: Readonly<Record<string, GraphDocument>>, path: string): string[] | null {
  const found = doc === null ? null : nodeAtPath(doc, graphs, path)?.node;
  return found != null && found.type === "gather" && Array.isArray(found.slots) ? found.slots : null;
}

interface InspectorProps {
  doc: GraphDocument | null;
  graphs: Readonly<Record<string, GraphDocument>>;
  runId: string;
  groups: readonly string[];
  node: string;
  picture: RunPicture;
  shown: { colors: Readonly<Record<string, Color>>; reasons: Readonly<Record<string, string>> };
  /** The execution the graph shows, when one is chosen: its status and reason from the server. */
  viewing: Execution | null;
  events: readonly TraceEvent[];
  now: number;
  onClose: () => void;
  /** Inspect another node (a writer named in the state writes). */
  onSelect: (path: string) => void;
}

export function Inspector({ doc, graphs, runId, groups, node, picture, shown, viewing, events, now, onClose, onSelect }: InspectorProps) {
  const row = picture.nodes[node];
  const color = shown.colors[node];
  const reason = shown.reasons[node];
  const mine = events.filter((event) => event.node === node || (event.node ?? "").startsWith(`${node}/`));
  const children = Object.entries(picture.nodes).filter(([path]) => path.startsWith(`${node}/`));
  const slots = gatherSlots(doc, graphs, node);
  const activations = slots === null ? [] : gatherActivations(events, node);
  return (
    <section className="panel inspector" aria-labelledby="inspector-h">
      <h2 id="inspector-h">
        <span>
          Node <code>{node}</code>
        </span>
        <button type="button" className="secondary" onClick={onClose} aria-label="Close the inspector (Escape)">
          ✕
        </button>
      </h2>
      <dl>
        {viewing !== null && (
          <>
            <dt>In</dt>
            <dd>
              {executionTitle(viewing)} <code>{viewing.id}</code> <StatusPill status={viewing.status} />
              {reasonBeside(viewing.status, viewing.reason) !== "" && (
                <div className="muted">
                  <ReasonText reason={reasonBeside(viewing.status, viewing.reason)} />
                </div>
              )}
            </dd>
          </>
        )}
        <dt>Color</dt>
        <dd>{color === undefined ? "—" : <StatusPill status={color} />}</dd>
        {reason !== undefined && (
          <>
            <dt>Why</dt>
            <dd>
              <ReasonText reason={reason} />
            </dd>
          </>
        )}
        <dt>Row</dt>
        <dd>{row === undefined ? "no row (skipped, cancelled and pending are never written)" : row.status}</dd>
      </dl>
      <Votes votes={shownVotes(row?.status, picture.decisions[node])} now={now} />
      {row?.status === "waiting" && <DecideHere runId={runId} node={node} groups={groups} version={picture} />}
      {row !== undefined && <RowDetails row={row} last={mine.at(-1)} now={now} />}
      <StateWrites runId={runId} node={node} hasRun={row !== undefined} version={writesVersion(row, picture)} onSelect={onSelect} />
      {slots !== null && (
        <>
          <h3>Gather slots</h3>
          {activations.length === 0 ? (
            <p className="muted">No branch has arrived yet.</p>
          ) : (
            <pre>{activations.map((activation) => describeActivation(activation, slots)).join("\n")}</pre>
          )}
        </>
      )}
      {children.length > 0 && (
        <>
          <h3>Subflow rows</h3>
          <pre>{children.map(([path, child]) => `${path}: ${child.status} (${child.execution_id})`).join("\n")}</pre>
        </>
      )}
      <h3>Trace events ({mine.length})</h3>
      {mine.length === 0 ? (
        <p className="muted">No trace event names this node.</p>
      ) : (
        <ol className="trace-list">
          {mine.slice(-200).map((event) => (
            <li key={event.seq}>
              <span title={absoluteTime(event.at)}>#{event.seq}</span> <strong>{event.event}</strong> <code>{event.execution_id}</code>
              {Object.keys(event.detail ?? {}).length > 0 && <> {JSON.stringify(event.detail)}</>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

interface GanttProps {
  events: readonly TraceEvent[];
  now: number;
  /** The server's statuses: the bars read them instead of guessing; null until they arrive. */
  statuses: ServerStatuses | null;
  /** When an execution is picked: only its bars and those of the executions around it. */
  chosen: string | null;
  truncated: boolean;
  error: string;
  /** False until the trace's first pages have arrived. */
  ready: boolean;
}

/** The server's statuses as the timeline reads them: executions by id, and each node's live row. */
function serverStatuses(tree: ExecutionTree, picture: RunPicture | null): ServerStatuses {
  return {
    execution: (id: string): ExecutionStatus | undefined => tree.byId.get(id)?.status,
    row: (node: string, executionId: string): Color | undefined =>
      picture?.nodes[node]?.execution_id === executionId ? picture.colors[node] : undefined,
  };
}

function Gantt({ events, now, statuses, chosen, truncated, error, ready }: GanttProps) {
  const line = useMemo(() => {
    if (statuses === null || !ready) return null;
    const all = timeline(events, now, statuses);
    if (chosen === null) return all;
    const related = (id: string) => isWithin(id, chosen) || isWithin(chosen, id);
    return { ...all, bars: all.bars.filter((bar) => related(bar.executionId)) };
  }, [events, now, statuses, chosen, ready]);
  const notes = (
    <>
      {error !== "" && <p className="error" role="alert">{error}</p>}
      {truncated && <p className="muted">The trace is long: only its first 10,000 events are shown.</p>}
    </>
  );
  if (line === null || line.bars.length === 0) {
    return (
      <section className="panel" aria-labelledby="gantt-h">
        <h2 id="gantt-h">Timeline</h2>
        <p className="muted" role="status">{line === null ? "Loading the timeline…" : "No node has run yet."}</p>
        {notes}
      </section>
    );
  }
  return (
    <section className="panel" aria-labelledby="gantt-h">
      <h2 id="gantt-h">Timeline{chosen !== null && <span className="muted"> of {chosen}</span>}</h2>
      <div className="gantt-axis" aria-hidden="true">
        <span>{absoluteTime(new Date(line.start).toISOString())}</span>
        <span>{durationText(line.end - line.start)}</span>
      </div>
      <VirtualList
        items={line.bars}
        rowHeight={GANTT_ROW}
        height={Math.min(300, line.bars.length * GANTT_ROW + 4)}
        label="Timeline: one bar per node execution"
        rowKey={(bar) => bar.key}
        renderRow={(bar) => {
          const { left, width } = barGeometry(bar, line);
          const text = `${bar.node} in ${bar.executionId}: ${bar.color}, ${durationText(bar.end - bar.start)}${bar.open ? " so far" : ""}`;
          return (
            <div className="gantt-row" title={text}>
              <span className="gantt-row__label" style={{ paddingLeft: `${bar.depth * 0.75}rem` }}>
                <span aria-hidden="true">{COLOR_CUES[bar.color].icon}</span> {bar.node}
                {bar.depth > 0 && <span className="muted"> · {bar.executionId.split(":").slice(-2).join(":")}</span>}
              </span>
              <span className="gantt-row__track" role="img" aria-label={text}>
                <span className={`gantt-bar ${colorClass(bar.color)}`} style={{ left: `${left}%`, width: `${width}%` }} />
              </span>
            </div>
          );
        }}
      />
      {notes}
    </section>
  );
}

/** The run's error text: the page's, then the API's once the run finishes while watched. */
function useRunError(runId: string, status: string, initial: string): string {
  const [error, setError] = useState(initial);
  useEffect(() => {
    if (status !== "failed" || error !== "") return;
    let stopped = false;
    getJson(`/api/runs/${runId}/`).then(
      (body) => {
        const text = (body as { error?: unknown }).error;
        if (!stopped && typeof text === "string") setError(text);
      },
      () => undefined,
    );
    return () => {
      stopped = true;
    };
  }, [runId, status, error]);
  return error;
}

function parseDoc(value: unknown): { doc: GraphDocument } | { error: string } {
  try {
    return { doc: parseGraph(value) };
  } catch (error) {
    return { error: error instanceof GraphFormatError ? error.message : String(error) };
  }
}

/** The run's subflow graphs that parse, by key; one that does not is drawn as a plain subflow node. */
function parseGraphs(values: Record<string, unknown> | undefined): Record<string, GraphDocument> {
  const graphs: Record<string, GraphDocument> = {};
  for (const [key, value] of Object.entries(values ?? {})) {
    if (key === MAIN_GRAPH) continue;
    const parsed = parseDoc(value);
    if ("doc" in parsed) graphs[key] = parsed.doc;
  }
  return graphs;
}

/** The chosen execution's view as it loads: its colors once they arrive, and any failure. */
export interface ChosenView {
  execution: string;
  /** The newest view the server gave for this execution, or null while none has arrived. */
  view: ExecutionView | null;
  /** Why the newest request failed, or "". */
  error: string;
}

/** Return the state after one answer for `execution`: a failure keeps the last view of the same execution. */
export function nextChosenView(previous: ChosenView | null, execution: string, result: ViewResult): ChosenView {
  const kept = previous !== null && previous.execution === execution ? previous.view : null;
  if ("view" in result) return { execution, view: result.view, error: "" };
  const error = result.error instanceof Error ? result.error.message : String(result.error);
  return { execution, view: kept, error };
}

/**
 * Follow the chosen execution's colors and reasons from the server: fetched when it is
 * chosen, and again (at most once a second) whenever `version` (the run) changes.
 */
function useExecutionView(runId: string, chosen: string | null, version: unknown): { state: ChosenView | null; retry: () => void } {
  const [state, setState] = useState<ChosenView | null>(null);
  const follower = useRef<ExecutionViewFollower | null>(null);
  useEffect(() => {
    const made = new ExecutionViewFollower(
      (execution) => fetchExecutionView(runId, execution),
      (execution, result) => setState((previous) => nextChosenView(previous, execution, result)),
    );
    follower.current = made;
    return () => made.stop();
  }, [runId]);
  useEffect(() => {
    follower.current?.refresh(chosen);
  }, [runId, chosen, version]);
  const retry = useCallback(() => follower.current?.refresh(chosen), [chosen]);
  if (chosen === null) return { state: null, retry };
  // Until the first answer for a newly chosen execution, it is loading.
  return { state: state?.execution === chosen ? state : { execution: chosen, view: null, error: "" }, retry };
}

/** Say what the graph shows: the live view, or the chosen execution (loading, failed, or its status and why). */
export function ViewMode({ chosen, execution, state, onLive, onRetry }: {
  chosen: string | null;
  execution: Execution | undefined;
  state: ChosenView | null;
  onLive: () => void;
  onRetry: () => void;
}) {
  if (chosen === null || state === null) {
    return <p className="view-mode" role="status">Showing the live view: colors from the run&apos;s node rows.</p>;
  }
  const name = (
    <>
      execution <code>{chosen}</code>
      {execution !== undefined && <> ({executionTitle(execution)})</>}
    </>
  );
  const live = <button type="button" onClick={onLive}>Live</button>;
  if (state.view === null && state.error === "") {
    return (
      <p className="view-mode view-mode--loading" role="status" aria-busy="true">
        <span className="spinner" aria-hidden="true" /> Loading the colors of {name}… {live}
      </p>
    );
  }
  if (state.error !== "") {
    return (
      <p className="view-mode error" role="alert">
        Could not load the colors of {name}: {sentence(state.error)}{" "}
        {state.view === null ? "The graph is shown uncolored." : "The graph shows the colors last loaded."}
        <button type="button" onClick={onRetry}>Try again</button>
        {live}
      </p>
    );
  }
  return (
    <p className="view-mode" role="status">
      Showing {name}
      {execution !== undefined && (
        <>
          {" "}<StatusPill status={execution.status} />
          {reasonBeside(execution.status, execution.reason) !== "" && (
            <span className="view-mode__reason">
              {" "}
              <ReasonText reason={reasonBeside(execution.status, execution.reason)} />
            </span>
          )}
        </>
      )}
      . Each node is colored as it stood in this execution. {live}
    </p>
  );
}

/** The whole view. */
export function RunView({ data }: { data: RunViewData }) {
  const now = useNow(1000);
  const parsed = useMemo(() => parseDoc(data.graph), [data.graph]);
  const graphs = useMemo(() => parseGraphs(data.graphs), [data.graphs]);
  const [toggled, setToggled] = useState<ReadonlySet<string>>(() => new Set());
  const toggleSubflow = useCallback(
    (path: string) =>
      setToggled((current) => {
        const next = new Set(current);
        if (next.has(path)) next.delete(path);
        else next.add(path);
        return next;
      }),
    [],
  );
  const { picture, executions, executionsError, connection, error } = useRunLive(data.run.id);
  const { events, truncated, error: traceError, ready: traceReady } = useTrace(data.run.id, picture);
  const [chosen, setChosen] = useState<string | null>(null);
  const [node, setNode] = useState<string | null>(null);
  const [help, setHelp] = useState(false);
  // The camera follows the live work until a person moves the view or looks at a past
  // execution; "Follow live work" (or "l") returns to the live view, frames on its work now
  // and follows again.
  const [following, setFollowing] = useState(true);
  const [frameAgain, setFrameAgain] = useState(0);
  const follow = useCallback(() => {
    setChosen(null);
    setFollowing(true);
    setFrameAgain((count) => count + 1);
  }, []);
  const stopFollowing = useCallback(() => setFollowing(false), []);
  const status = picture?.status ?? data.run.status;
  const tree = useMemo(() => buildExecutionTree(executions ?? []), [executions]);
  const liveIds = useMemo(() => (picture === null ? null : liveNodeIds(picture.colors, Object.keys(picture.colors))), [picture]);
  const statuses = useMemo(() => (executions === null ? null : serverStatuses(tree, picture)), [executions, tree, picture]);
  const { state: chosenView, retry: retryView } = useExecutionView(data.run.id, chosen, picture);

  const shown = useMemo(() => {
    if (chosen === null) return { colors: picture?.colors ?? NO_COLORS, reasons: picture?.reasons ?? NO_REASONS };
    return { colors: chosenView?.view?.colors ?? NO_COLORS, reasons: chosenView?.view?.reasons ?? NO_REASONS };
  }, [chosen, picture, chosenView]);

  const onKey = useCallback((event: KeyboardEvent) => {
    const target = event.target as HTMLElement;
    if (target.closest("input, textarea, select, dialog")) return;
    if (event.key === "?") setHelp((open) => !open);
    else if (event.key === "Escape") {
      setHelp(false);
      setNode(null);
    } else if (event.key === "l") follow();
  }, [follow]);
  useEffect(() => {
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onKey]);

  const followingLive = following && chosen === null && !isFinished(status);
  const runError = useRunError(data.run.id, status, data.run.error);
  const chosenExecution = chosen === null ? undefined : tree.byId.get(chosen);
  const goLive = useCallback(() => setChosen(null), []);
  return (
    <div className="run-view">
      <div className="run-head">
        <StatusPill status={status} />
        <span>
          {data.run.flow === null ? "no flow" : <a href={`/flows/${data.run.flow}/`}>{data.run.flow} v{data.run.version}</a>}
        </span>
        <span>started by {data.run.started_by ?? "command line"}</span>
        <RelativeTime iso={data.run.created_at} now={now} />
        <span className={`live-badge live-badge--${connection === "live" ? "live" : "other"}`} role="status">
          {connection === "live" ? "● live" : connection}
        </span>
        {!isFinished(status) && (
          <button type="button" className="secondary follow-live" aria-pressed={followingLive} onClick={follow}
            title="Keep the running and waiting steps in view; moving the view yourself stops it">
            Follow live work
          </button>
        )}
        <button type="button" className="link" onClick={() => setHelp(true)} aria-label="Keyboard shortcuts">
          ? shortcuts
        </button>
      </div>
      {error !== "" && <p className="error" role="alert">{error}</p>}
      {runError !== "" && status === "failed" && (
        <p className="error" role="alert">
          The run failed: {runError}
        </p>
      )}
      <ViewMode chosen={chosen} execution={chosenExecution} state={chosenView} onLive={goLive} onRetry={retryView} />
      <Legend />
      <div className={node === null || picture === null ? "run-layout run-layout--single" : "run-layout"}>
        <div className={chosenView !== null && chosenView.view === null ? "run-graph--stale" : undefined} aria-busy={chosenView !== null && chosenView.view === null && chosenView.error === ""}>
          {"doc" in parsed ? (
            <FlowView doc={parsed.doc} colors={shown.colors} reasons={shown.reasons} onNodeChoose={setNode}
              graphs={graphs}
              toggled={toggled}
              onToggleSubflow={toggleSubflow}
              showLegend={false}
              fitMinZoom={FIT_MIN_ZOOM}
            >
              <FrameOnLive liveIds={liveIds} focusId={node ?? undefined} follow={followingLive}
                onUserMove={stopFollowing} frameAgain={frameAgain} />
            </FlowView>
          ) : (
            <FlowError message={parsed.error} />
          )}
          <p className="hint">
            Hover or focus a node to read why it has its color; click it (or press Enter) to inspect it.
            {Object.keys(graphs).length > 0 && " A subflow's steps are drawn inside it: its show/hide button opens or closes them."}
          </p>
        </div>
        {node !== null && picture !== null && (
          <div className="run-side">
            <Inspector doc={"doc" in parsed ? parsed.doc : null} graphs={graphs} runId={data.run.id} groups={data.viewer.groups} node={node} picture={picture} shown={shown} viewing={chosenExecution ?? null} events={events} now={now} onClose={() => setNode(null)} onSelect={setNode} />
          </div>
        )}
      </div>
      <div className="run-below">
        <ExecutionTreePanel tree={tree} chosen={chosen} onChoose={setChosen} ready={executions !== null} error={executionsError} />
        <Gantt events={events} now={now} statuses={statuses} chosen={chosen} truncated={truncated} error={traceError} ready={traceReady} />
        {data.viewer.can_administer && <AdminActions runId={data.run.id} status={status} />}
      </div>
      <Shortcuts open={help} onClose={() => setHelp(false)} items={RUN_SHORTCUTS} />
    </div>
  );
}
