/**
 * The flow editor: palette, canvas, side panel, problems, saving, publishing
 * and version history. The document is the one source of truth: every edit
 * is a pure function of it (src/designer) pushed onto the undo history, and
 * the canvas is derived from it.
 */

import {
  Background,
  BackgroundVariant,
  type Connection as FlowConnection,
  Controls,
  type DefaultEdgeOptions,
  type EdgeChange,
  type FinalConnectionState,
  MarkerType,
  MiniMap,
  type NodeChange,
  Panel,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
} from "@xyflow/react";
import { type DragEvent, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { autoLayout } from "../designer/autolayout";
import { editorCanvas } from "../designer/canvas";
import { type Command, commandFor } from "../designer/shortcuts";
import { diffGraphs, type GraphDiff } from "../designer/diff";
import { checkConnection, sourceHandles, targetHandles } from "../designer/handles";
import { canRedo, canUndo, createHistory, type History, push, redo, undo } from "../designer/history";
import { applyFix, quickFix } from "../designer/quickfix";
import { type TestResult, TestRunPanel } from "./TestRun";
import {
  addEdge,
  addNode,
  type Clipboard,
  copyNodes,
  duplicateNodes,
  isClipboard,
  moveNodes,
  pasteNodes,
  removeElements,
} from "../designer/ops";
import { type EditorEdge, type EditorNode, editorPositions } from "../designer/serialize";
import { edgeTypes } from "../edges";
import { type GraphDocument, isNodeType, type NodeType, type Point } from "../graph/types";
import { CANVAS_ZOOM_FLOOR } from "../graph/zoom";
import { nodeTypes } from "../nodes";
import { type ActionInfo, api, ApiError, errorText, flowPath, type FlowRecord, type Problem, type VersionRecord } from "./api";
import { Inspector } from "./Inspector";
import { Palette, QuickAdd } from "./Palette";
import { useValidation } from "./useValidation";
import { ConflictBanner, ConnectionTip, ProblemsPanel, Shortcuts, VersionBanner, VersionsPanel } from "./panels";

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

type SaveState = "saved" | "dirty" | "saving" | "error" | "conflict" | "readonly";

interface Conflict {
  revision: number;
  draft: GraphDocument;
  updatedAt: string;
}

const SAVE_DELAY_MS = 800;
const GRID: [number, number] = [16, 16];
const CLIPBOARD_KEY = "braid.clipboard";
/** At the fitted zoom the canvas's smallest text (12 px) stays at 12 px or more on screen. */
const FIT_MIN_ZOOM = CANVAS_ZOOM_FLOOR;
const FIT_VIEW = { padding: 0.12, maxZoom: 1, minZoom: FIT_MIN_ZOOM };
const DEFAULT_EDGE_OPTIONS: DefaultEdgeOptions = { markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 } };
const SAVE_TEXT: Record<SaveState, string> = {
  saved: "All changes saved",
  dirty: "Unsaved changes…",
  saving: "Saving…",
  error: "Not saved",
  conflict: "Not saved: conflict",
  readonly: "Read-only",
};

/** The document without its layout: what a test run's colors belong to (moving a node keeps them). */
function graphJson(doc: GraphDocument): string {
  const { layout: _layout, ...graph } = doc as GraphDocument & { layout?: unknown };
  return json(graph);
}

function json(value: unknown): string {
  return JSON.stringify(value);
}

function inEditableField(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

/**
 * Fill in positions for nodes without one, so that nothing jumps when a node
 * is added: the auto-layout when the document has none, else beside the rest.
 */
function withPositions(doc: GraphDocument): GraphDocument {
  if (doc.nodes.every((node) => doc.layout?.[node.id] !== undefined)) return doc;
  if (doc.nodes.every((node) => doc.layout?.[node.id] === undefined)) return moveNodes(doc, autoLayout(doc));
  return moveNodes(doc, Object.fromEntries(editorPositions(doc)));
}

export function Editor(props: { page: EditorPage }) {
  return (
    <ReactFlowProvider>
      <EditorInner {...props} />
    </ReactFlowProvider>
  );
}

function EditorInner({ page }: { page: EditorPage }) {
  const flow = useReactFlow();
  const [history, setHistory] = useState<History<GraphDocument>>(() => createHistory(withPositions(page.draft)));
  const doc = history.present;
  const [selected, setSelected] = useState<{ nodes: Set<string>; edges: Set<string> }>({ nodes: new Set(), edges: new Set() });
  const [dragging, setDragging] = useState<Record<string, Point> | null>(null);
  const [actions, setActions] = useState<ActionInfo[]>([]);
  const [saveState, setSaveState] = useState<SaveState>(page.canEdit ? "saved" : "readonly");
  const [saveError, setSaveError] = useState("");
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [latestVersion, setLatestVersion] = useState(page.latestVersion);
  const [versions, setVersions] = useState<VersionRecord[] | null>(null);
  const [showVersions, setShowVersions] = useState(false);
  const [viewing, setViewing] = useState<VersionRecord | null>(null);
  const [showShortcuts, setShowShortcuts] = useState(false);
  const [status, setStatus] = useState("");
  const [publishing, setPublishing] = useState(false);
  const [testing, setTesting] = useState(false);
  const [tested, setTested] = useState<{ json: string; result: TestResult } | null>(null);
  const revision = useRef(page.revision);
  // The draft as loaded, with positions filled in for nodes that had none: not an unsaved edit.
  const savedJson = useRef(json(history.present));
  const saving = useRef<Promise<boolean> | null>(null);
  const localClipboard = useRef<Clipboard | null>(null);
  const quickAddInput = useRef<HTMLInputElement>(null);
  const readOnly = !page.canEdit || viewing !== null;
  const shownDoc = viewing?.graph ?? doc;

  // A test run's colors stay on the canvas until the graph changes.
  const testedNow = tested !== null && viewing === null && tested.json === graphJson(doc) ? tested.result : null;
  const actionOutcomes = useMemo(() => Object.fromEntries(actions.map((a) => [a.name, a.outcomes])), [actions]);

  const commit = useCallback((next: GraphDocument) => setHistory((h) => push(h, next)), []);

  // ---- loading the action catalog and versions --------------------------------------
  useEffect(() => {
    api<ActionInfo[]>("GET", "/api/actions/").then(setActions, () => setActions([]));
  }, []);

  const loadVersions = useCallback(() => {
    api<{ results: VersionRecord[] }>("GET", flowPath(page.slug, "versions/?limit=100")).then(
      (body) => setVersions(body.results),
      (error: unknown) => setStatus(`Could not load the versions: ${errorText(error)}`),
    );
  }, [page.slug]);
  useEffect(loadVersions, [loadVersions]);

  // ---- saving ------------------------------------------------------------------------
  const latest = useRef(history.present);
  latest.current = history.present;

  /** PUT the latest draft; one save at a time, so that a second never races the first's revision. */
  const saveNow = useCallback(
    async (options: { keepReplaced?: boolean; baseRevision?: number }): Promise<boolean> => {
      const draft = latest.current;
      const body = json(draft);
      if (body === savedJson.current && !options.keepReplaced) {
        setSaveState("saved");
        return true;
      }
      setSaveState("saving");
      try {
        const saved = await api<FlowRecord>("PUT", flowPath(page.slug), {
          draft,
          base_revision: options.baseRevision ?? revision.current,
          ...(options.keepReplaced ? { keep_replaced: true } : {}),
        });
        revision.current = saved.revision;
        savedJson.current = body;
        setConflict(null);
        setSaveState(json(latest.current) === body ? "saved" : "dirty");
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.status === 409 && error.body.code === "flow.draft_conflict") {
          setConflict({ revision: Number(error.body.revision), draft: error.body.draft as GraphDocument, updatedAt: String(error.body.updated_at) });
          setSaveState("conflict");
        } else {
          setSaveError(errorText(error));
          setSaveState("error");
        }
        return false;
      }
    },
    [page.slug],
  );

  const save = useCallback(
    (options: { keepReplaced?: boolean; baseRevision?: number } = {}): Promise<boolean> => {
      const next = (saving.current ?? Promise.resolve(true)).then(() => saveNow(options));
      saving.current = next;
      return next;
    },
    [saveNow],
  );

  useEffect(() => {
    if (!page.canEdit || conflict !== null) return;
    if (json(doc) === savedJson.current) {
      if (saveState === "dirty") setSaveState("saved");
      return;
    }
    setSaveState((state) => (state === "saving" ? state : "dirty"));
    const timer = window.setTimeout(() => void save(), SAVE_DELAY_MS);
    return () => window.clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [doc, conflict]);

  useEffect(() => {
    const warn = (event: BeforeUnloadEvent) => {
      if (page.canEdit && json(history.present) !== savedJson.current) event.preventDefault();
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [history.present, page.canEdit]);

  // ---- validation as you draw --------------------------------------------------------
  const { report, setReport, checking } = useValidation(page.slug, doc, page.canEdit, setStatus);

  // Findings are the draft's: a version on show was valid when it was published.
  const problems = useMemo(() => (report === null || viewing !== null ? [] : [...report.errors, ...report.warnings]), [report, viewing]);

  // ---- the canvas, derived from the document ------------------------------------------
  const diff: GraphDiff | null = useMemo(() => (viewing === null ? null : diffGraphs(doc, viewing.graph)), [viewing, doc]);

  const { nodes: canvasNodes, edges } = useMemo(
    () =>
      editorCanvas(shownDoc, {
        actionOutcomes,
        findings: problems,
        dragging,
        selectedNodes: selected.nodes,
        selectedEdges: selected.edges,
        readOnly,
        diff,
      }),
    [shownDoc, actionOutcomes, problems, dragging, selected, readOnly, diff],
  );
  // A test run's colors and reasons, on the nodes it ran.
  const nodes = useMemo(
    () =>
      testedNow === null
        ? canvasNodes
        : canvasNodes.map((node) => {
            const data = { ...node.data };
            const color = testedNow.colors[node.id];
            if (color !== undefined) data.color = color;
            const reason = testedNow.reasons[node.id];
            if (reason !== undefined) data.reason = reason;
            return { ...node, data };
          }),
    [canvasNodes, testedNow],
  );

  // ---- canvas events -------------------------------------------------------------------
  const onNodesChange = useCallback(
    (changes: NodeChange<EditorNode>[]) => {
      let moved: Record<string, Point> | null = null;
      let finished = false;
      const picks: [string, boolean][] = [];
      for (const change of changes) {
        if (change.type === "position" && change.position) {
          moved = { ...(moved ?? dragging ?? {}), [change.id]: change.position };
          // A drag ends with dragging false; a keyboard move (arrow keys) is done at once.
          if (change.dragging !== true) finished = true;
        } else if (change.type === "position" && change.dragging === false) {
          finished = true;
        } else if (change.type === "select") {
          picks.push([change.id, change.selected]);
        }
      }
      // Functional updates: React Flow may send several batches before a render.
      if (picks.length > 0) {
        setSelected((current) => {
          const nodes = new Set(current.nodes);
          for (const [id, on] of picks) {
            if (on) nodes.add(id);
            else nodes.delete(id);
          }
          return { nodes, edges: current.edges };
        });
      }
      if (moved !== null) setDragging(moved);
      if (finished) {
        const positions = moved ?? dragging;
        if (positions !== null && !readOnly) commit(moveNodes(doc, positions));
        setDragging(null);
      }
    },
    [dragging, readOnly, doc, commit],
  );

  const onEdgesChange = useCallback((changes: EdgeChange<EditorEdge>[]) => {
    const picks = changes.flatMap((change) => (change.type === "select" ? [[change.id, change.selected] as const] : []));
    if (picks.length === 0) return;
    setSelected((current) => {
      const edges = new Set(current.edges);
      for (const [id, on] of picks) {
        if (on) edges.add(id);
        else edges.delete(id);
      }
      return { nodes: current.nodes, edges };
    });
  }, []);

  const connectionCheck = useCallback((connection: FlowConnection | { source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null }) => checkConnection(doc, connection, actionOutcomes), [doc, actionOutcomes]);

  const onConnect = useCallback(
    (connection: FlowConnection) => {
      const result = connectionCheck(connection);
      if (result.ok) {
        commit(addEdge(doc, result.edge));
        setStatus(`Connected ${connection.source} to ${connection.target}.`);
      } else setStatus(result.reason);
    },
    [connectionCheck, doc, commit],
  );

  const onConnectEnd = useCallback(
    (_event: MouseEvent | TouchEvent, state: FinalConnectionState) => {
      if (state.isValid || state.fromNode === null || state.toNode === null) return;
      const from = state.fromHandle;
      const to = state.toHandle;
      const [source, sourceHandle, target, targetHandle] =
        from?.type === "target" ? [state.toNode.id, to?.id ?? null, state.fromNode.id, from.id ?? null] : [state.fromNode.id, from?.id ?? null, state.toNode.id, to?.id ?? null];
      const result = connectionCheck({ source, sourceHandle, target, targetHandle });
      if (!result.ok) setStatus(`Not connected: ${result.reason}`);
    },
    [connectionCheck],
  );

  const selectOnly = useCallback((ids: string[]) => setSelected({ nodes: new Set(ids), edges: new Set() }), []);

  // Pan to a node just added or pasted when it landed outside the visible canvas.
  const [reveal, setReveal] = useState<string | null>(null);
  useEffect(() => {
    if (reveal === null) return;
    setReveal(null);
    const target = nodes.find((n) => n.id === reveal);
    const box = document.querySelector(".braid-editor__canvas")?.getBoundingClientRect();
    if (target === undefined || box === undefined) return;
    const width = target.width ?? 232;
    const height = target.height ?? 86;
    const topLeft = flow.flowToScreenPosition(target.position);
    const bottomRight = flow.flowToScreenPosition({ x: target.position.x + width, y: target.position.y + height });
    const inside = topLeft.x >= box.left && topLeft.y >= box.top && bottomRight.x <= box.right - 160 && bottomRight.y <= box.bottom;
    if (!inside) void flow.setCenter(target.position.x + width / 2, target.position.y + height / 2, { zoom: flow.getZoom() });
  }, [reveal, nodes, flow]);

  const placeNear = useCallback((): Point => {
    const only = selected.nodes.size === 1 ? [...selected.nodes][0]! : null;
    if (only !== null && doc.layout?.[only] !== undefined) {
      const at = doc.layout[only]!;
      const children = doc.edges.filter((e) => e.source === only).length;
      return { x: at.x + children * 290, y: at.y + 150 };
    }
    const box = document.querySelector(".braid-editor__canvas")?.getBoundingClientRect();
    const center = box ? { x: box.left + box.width / 2, y: box.top + box.height / 2 } : { x: 400, y: 300 };
    return flow.screenToFlowPosition(center);
  }, [selected, doc, flow]);

  /** Add a node; with one node selected, place it below and connect the first free outcome. */
  const quickAdd = useCallback(
    (type: NodeType, at?: Point) => {
      if (readOnly) return;
      const only = at === undefined && selected.nodes.size === 1 ? [...selected.nodes][0]! : null;
      const added = addNode(doc, type, at ?? placeNear());
      let next = added.doc;
      const from = only === null ? undefined : next.nodes.find((n) => n.id === only);
      if (from !== undefined) {
        const newNode = next.nodes.find((n) => n.id === added.id)!;
        const free = sourceHandles(from, actionOutcomes).find((h) => !next.edges.some((e) => e.source === from.id && (e.branch !== undefined ? `branch:${e.branch}` : `outcome:${e.outcome ?? "next"}`) === h.id));
        const target = targetHandles(newNode)[0];
        if (free !== undefined && target !== undefined) {
          const result = checkConnection(next, { source: from.id, sourceHandle: free.id, target: newNode.id, targetHandle: target.id }, actionOutcomes);
          if (result.ok) next = addEdge(next, result.edge);
        }
      }
      commit(next);
      selectOnly([added.id]);
      setReveal(added.id);
      setStatus(`Added ${type} ${added.id}${from !== undefined ? ` after ${from.id}` : ""}.`);
    },
    [readOnly, selected, doc, placeNear, actionOutcomes, commit, selectOnly],
  );

  const onDragOver = useCallback((event: DragEvent) => {
    if (event.dataTransfer.types.includes("application/x-braid-node")) {
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
    }
  }, []);

  const onDrop = useCallback(
    (event: DragEvent) => {
      const type = event.dataTransfer.getData("application/x-braid-node");
      if (!isNodeType(type) || readOnly) return;
      event.preventDefault();
      const at = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY });
      quickAdd(type, { x: at.x - 116, y: at.y - 35 });
    },
    [flow, quickAdd, readOnly],
  );

  // ---- editing commands ---------------------------------------------------------------------
  const deleteSelection = useCallback(() => {
    if (readOnly || (selected.nodes.size === 0 && selected.edges.size === 0)) return;
    const indices = new Set(edges.filter((e) => selected.edges.has(e.id)).map((e) => e.data!.index));
    commit(removeElements(doc, selected.nodes, indices));
    setStatus(`Deleted ${selected.nodes.size} node(s) and ${indices.size} edge(s).`);
    setSelected({ nodes: new Set(), edges: new Set() });
  }, [readOnly, selected, edges, doc, commit]);

  const copySelection = useCallback(() => {
    if (selected.nodes.size === 0) return;
    const clip = copyNodes(shownDoc, selected.nodes);
    localClipboard.current = clip;
    try {
      window.localStorage.setItem(CLIPBOARD_KEY, json(clip));
    } catch {
      /* storage full or disabled: the in-page copy still works */
    }
    setStatus(`Copied ${clip.nodes.length} node(s).`);
  }, [selected, shownDoc]);

  const paste = useCallback(() => {
    if (readOnly) return;
    let clip = localClipboard.current;
    try {
      const stored: unknown = JSON.parse(window.localStorage.getItem(CLIPBOARD_KEY) ?? "null");
      if (isClipboard(stored)) clip = stored;
    } catch {
      /* keep the in-page copy */
    }
    if (clip === null || clip.nodes.length === 0) {
      setStatus("Nothing to paste: copy nodes first (Ctrl+C).");
      return;
    }
    const result = pasteNodes(doc, clip, { x: 48, y: 48 });
    commit(result.doc);
    selectOnly(result.ids);
    setReveal(result.ids[0] ?? null);
    setStatus(`Pasted ${result.ids.length} node(s).`);
  }, [readOnly, doc, commit, selectOnly]);

  const duplicate = useCallback(() => {
    if (readOnly || selected.nodes.size === 0) return;
    const result = duplicateNodes(doc, selected.nodes);
    commit(result.doc);
    selectOnly(result.ids);
  }, [readOnly, selected, doc, commit, selectOnly]);

  const arrange = useCallback(() => {
    if (readOnly) return;
    commit(moveNodes(doc, autoLayout(doc, actionOutcomes)));
    window.setTimeout(() => void flow.fitView(FIT_VIEW), 0);
    setStatus("Laid out top to bottom, branches and slots in declared order. Undo (Ctrl+Z) reverts.");
  }, [readOnly, doc, actionOutcomes, commit, flow]);

  /**
   * Open on the whole flow when it fits at a readable zoom; otherwise at that
   * zoom with its top in view and the start centred, so the reader starts at
   * the start and pans from there.
   */
  const showStart = useCallback(() => {
    const box = document.querySelector(".braid-editor__canvas")?.getBoundingClientRect();
    const all = flow.getNodes();
    if (box === undefined || all.length === 0) return;
    const bounds = flow.getNodesBounds(all);
    const pad = 1 + 2 * FIT_VIEW.padding;
    const fits = Math.min(box.width / (bounds.width * pad), box.height / (bounds.height * pad)) >= FIT_MIN_ZOOM;
    if (fits) {
      void flow.fitView(FIT_VIEW);
      return;
    }
    const start = all.find((n) => n.type === "start") ?? all[0]!;
    const zoom = FIT_MIN_ZOOM;
    const centre = start.position.x + (start.width ?? 232) / 2;
    void flow.setViewport({ x: box.width / 2 - centre * zoom, y: 56 - bounds.y * zoom, zoom });
  }, [flow]);

  const doUndo = useCallback(() => setHistory((h) => undo(h)), []);
  const doRedo = useCallback(() => setHistory((h) => redo(h)), []);

  const focusProblem = useCallback(
    (problem: Problem) => {
      if (problem.node !== null) {
        const node = nodes.find((n) => n.id === problem.node);
        if (node) {
          selectOnly([node.id]);
          void flow.setCenter(node.position.x + (node.width ?? 232) / 2, node.position.y + (node.height ?? 70) / 2, { zoom: Math.max(flow.getZoom(), 1), duration: 200 });
          document.querySelector<HTMLElement>(`.react-flow__node[data-id="${CSS.escape(node.id)}"]`)?.focus();
        }
      } else if (problem.edge_index !== null) {
        const edge = edges.find((e) => e.data!.index === problem.edge_index);
        const source = nodes.find((n) => n.id === edge?.source);
        const target = nodes.find((n) => n.id === edge?.target);
        if (edge && source && target) {
          setSelected({ nodes: new Set(), edges: new Set([edge.id]) });
          void flow.setCenter((source.position.x + target.position.x) / 2 + 116, (source.position.y + target.position.y) / 2 + 35, { zoom: Math.max(flow.getZoom(), 1), duration: 200 });
        }
      }
    },
    [nodes, edges, flow, selectOnly],
  );

  // ---- keyboard -------------------------------------------------------------------------------
  const commands: Record<Command, () => void> = {
    escape: () => {
      if (showShortcuts) setShowShortcuts(false);
      else if (showVersions) setShowVersions(false);
      else if (!inEditableField(document.activeElement)) setSelected({ nodes: new Set(), edges: new Set() });
    },
    undo: () => !readOnly && doUndo(),
    redo: () => !readOnly && doRedo(),
    copy: copySelection,
    paste,
    duplicate,
    save: () => void save(),
    selectAll: () => setSelected({ nodes: new Set(shownDoc.nodes.map((n) => n.id)), edges: new Set() }),
    delete: deleteSelection,
    quickAdd: () => quickAddInput.current?.focus(),
    autoLayout: arrange,
    help: () => setShowShortcuts((shown) => !shown),
  };
  const commandsRef = useRef(commands);
  commandsRef.current = commands;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const { key, ctrlKey, metaKey, shiftKey } = event;
      const command = commandFor({ key, ctrlKey, metaKey, shiftKey, inField: inEditableField(event.target) });
      if (command === null) return;
      // Copy keeps the browser's own copy too; every other shortcut is the editor's alone.
      if (command !== "copy" && command !== "escape") event.preventDefault();
      commandsRef.current[command]();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  // ---- publishing, conflicts and versions -----------------------------------------------------------
  const publish = useCallback(async () => {
    setPublishing(true);
    try {
      if (json(history.present) !== savedJson.current && !(await save())) {
        setStatus("Publishing needs the draft saved first.");
        return;
      }
      const version = await api<VersionRecord>("POST", flowPath(page.slug, "publish/"));
      setLatestVersion(version.number);
      setStatus(`Published version ${version.number}.`);
      loadVersions();
    } catch (error) {
      if (error instanceof ApiError && Array.isArray(error.body.errors)) {
        setReport({ ok: false, errors: error.body.errors as Problem[], warnings: (error.body.warnings as Problem[] | undefined) ?? [] });
        setStatus(`Not published: ${errorText(error)}. See Problems.`);
      } else setStatus(`Not published: ${errorText(error)}`);
    } finally {
      setPublishing(false);
    }
  }, [history.present, save, page.slug, loadVersions]);

  const keepMine = useCallback(() => {
    if (conflict === null) return;
    void save({ keepReplaced: true, baseRevision: conflict.revision });
  }, [conflict, save]);

  const takeTheirs = useCallback(() => {
    if (conflict === null) return;
    revision.current = conflict.revision;
    savedJson.current = json(conflict.draft);
    setHistory((h) => push(h, withPositions(conflict.draft)));
    setConflict(null);
    setSaveState("saved");
    setStatus("Loaded the saved draft. Undo (Ctrl+Z) brings your version back.");
  }, [conflict]);

  const restore = useCallback(
    (version: VersionRecord) => {
      commit(withPositions(version.graph));
      setViewing(null);
      setStatus(`Restored version ${version.number} into the draft. Undo (Ctrl+Z) reverts.`);
    },
    [commit],
  );

  const selectedNode = selected.nodes.size === 1 && viewing === null ? (doc.nodes.find((n) => selected.nodes.has(n.id)) ?? null) : null;

  return (
    <div className="braid-editor">
      <div className="braid-editor__toolbar" role="toolbar" aria-label="Flow editor">
        <h1 className="braid-editor__title">
          {doc.name ?? page.name} <code>{page.slug}</code>
        </h1>
        <span className={`braid-save braid-save--${saveState}`} role="status" aria-live="polite" title={saveState === "error" ? saveError : ""}>
          {SAVE_TEXT[saveState]}
          {saveState === "error" && (
            <>
              {" "}
              <button type="button" onClick={() => void save()}>
                Retry
              </button>
            </>
          )}
        </span>
        {page.canEdit && (
          <>
            <button type="button" onClick={doUndo} disabled={readOnly || !canUndo(history)} aria-keyshortcuts="Control+Z">
              Undo
            </button>
            <button type="button" onClick={doRedo} disabled={readOnly || !canRedo(history)} aria-keyshortcuts="Control+Shift+Z">
              Redo
            </button>
            <button type="button" onClick={arrange} disabled={readOnly} aria-keyshortcuts="Shift+L">
              Auto-layout
            </button>
            <button type="button" className="braid-primary" onClick={() => void publish()} disabled={readOnly || publishing || saveState === "conflict"}>
              {publishing ? "Publishing…" : "Publish"}
            </button>
          </>
        )}
        <span className="braid-editor__version">{latestVersion === null ? "Not published yet" : `Latest: v${latestVersion}`}</span>
        {page.canEdit && (
          <button type="button" onClick={() => setTesting((shown) => !shown)} aria-expanded={testing} disabled={viewing !== null}>
            Test run
          </button>
        )}
        <button type="button" onClick={() => setShowVersions((shown) => !shown)} aria-expanded={showVersions}>
          History
        </button>
        <a className="braid-button" href={flowPath(page.slug, "export/")} download={`${page.slug}.json`}>
          Export
        </a>
        <button type="button" onClick={() => setShowShortcuts(true)} aria-label="Keyboard shortcuts">
          ?
        </button>
      </div>
      {conflict !== null && <ConflictBanner revision={conflict.revision} updatedAt={conflict.updatedAt} onTakeTheirs={takeTheirs} onKeepMine={keepMine} />}
      {testing && viewing === null && (
        <TestRunPanel
          slug={page.slug}
          doc={doc}
          onResult={(result) => setTested(result === null ? null : { json: graphJson(doc), result })}
          onClose={() => {
            setTesting(false);
            setTested(null);
          }}
        />
      )}
      {viewing !== null && diff !== null && (
        <VersionBanner version={viewing} diff={diff} onRestore={page.canEdit ? () => restore(viewing) : undefined} onBack={() => setViewing(null)} />
      )}
      <div className={readOnly ? "braid-editor__body braid-editor__body--no-palette" : "braid-editor__body"}>
        {!readOnly && <Palette onAdd={(type) => quickAdd(type)} />}
        <div className="braid-editor__canvas braid-flow" onDragOver={onDragOver} onDrop={onDrop}>
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            edgeTypes={edgeTypes}
            defaultEdgeOptions={DEFAULT_EDGE_OPTIONS}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            onConnectEnd={onConnectEnd}
            isValidConnection={(c) => connectionCheck(c).ok}
            nodesDraggable={!readOnly}
            nodesConnectable={!readOnly}
            elementsSelectable
            edgesReconnectable={false}
            deleteKeyCode={null}
            selectionKeyCode="Shift"
            multiSelectionKeyCode={["Meta", "Control"]}
            snapToGrid
            snapGrid={GRID}
            onInit={showStart}
            minZoom={0.2}
            maxZoom={2}
            connectionRadius={28}
          >
            <Background variant={BackgroundVariant.Dots} gap={GRID[0]} />
            <Controls fitViewOptions={FIT_VIEW} showInteractive={false} />
            <MiniMap pannable zoomable ariaLabel="Mini map of the flow" style={{ width: 150, height: 100 }} />
            {!readOnly && (
              <Panel position="top-left">
                <QuickAdd inputRef={quickAddInput} onAdd={(type) => quickAdd(type)} />
              </Panel>
            )}
            <ConnectionTip check={connectionCheck} />
          </ReactFlow>
        </div>
        {showVersions ? (
          <VersionsPanel versions={versions} viewing={viewing} onOpen={setViewing} onRestore={page.canEdit ? restore : undefined} onClose={() => setShowVersions(false)} />
        ) : (
          <Inspector
            doc={doc}
            node={selectedNode}
            readOnly={readOnly}
            problems={problems}
            actions={actions}
            actionOutcomes={actionOutcomes}
            approvalGroups={page.approvalGroups}
            onChange={commit}
            onSelectNode={(id) => selectOnly(id === null ? [] : [id])}
          />
        )}
      </div>
      {page.canEdit && viewing === null && <ProblemsPanel report={report} checking={checking} onFocus={focusProblem} fixFor={(problem) => quickFix(doc, problem)} onFix={(fix) => commit(applyFix(doc, fix))} />}
      <p className="braid-editor__status" role="status" aria-live="polite">
        {status}
      </p>
      {showShortcuts && <Shortcuts onClose={() => setShowShortcuts(false)} />}
    </div>
  );
}

