/**
 * The editor's commands on the document and the view: add a node where it
 * belongs, delete, copy, paste, duplicate, auto-layout, focus a problem, and
 * the keyboard shortcuts that ask for them.
 */

import { useReactFlow } from "@xyflow/react";
import { type Dispatch, useCallback, useEffect, useRef } from "react";
import { autoLayout } from "../designer/autolayout";
import { checkConnection, sourceHandles, targetHandles } from "../designer/handles";
import { addEdge, addNode, type Clipboard, copyNodes, duplicateNodes, isClipboard, moveNodes, pasteNodes, removeElements } from "../designer/ops";
import { type Command, commandFor } from "../designer/shortcuts";
import type { NodeType, Point } from "../graph/types";
import type { Problem } from "./api";
import { FIT_VIEW } from "./EditorCanvas";
import { type EditorAction, type EditorState, json, shownDoc } from "./editorState";
import type { EditorCanvasView } from "./useEditorCanvas";

const CLIPBOARD_KEY = "braid.clipboard";

export function inEditableField(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

interface CommandInputs {
  readOnly: boolean;
  actionOutcomes: Record<string, string[]>;
  canvas: EditorCanvasView;
}

export interface EditCommands {
  /** Add a node; with one node selected, place it below and connect the first free outcome. */
  quickAdd: (type: NodeType, at?: Point) => void;
  deleteSelection: () => void;
  copySelection: () => void;
  paste: () => void;
  duplicate: () => void;
  /** Lay the draft out again, top to bottom (undoable). */
  arrange: () => void;
  /** Select the node or edge a problem names and bring it into view. */
  focusProblem: (problem: Problem) => void;
}

/** Pan to a node just added or pasted when it landed outside the visible canvas. */
function useReveal(reveal: string | null, nodes: EditorCanvasView["nodes"], dispatch: Dispatch<EditorAction>) {
  const flow = useReactFlow();
  useEffect(() => {
    if (reveal === null) return;
    dispatch({ type: "reveal", id: null });
    const target = nodes.find((n) => n.id === reveal);
    const box = document.querySelector(".braid-editor__canvas")?.getBoundingClientRect();
    if (target === undefined || box === undefined) return;
    const width = target.width ?? 232;
    const height = target.height ?? 86;
    const topLeft = flow.flowToScreenPosition(target.position);
    const bottomRight = flow.flowToScreenPosition({ x: target.position.x + width, y: target.position.y + height });
    const inside = topLeft.x >= box.left && topLeft.y >= box.top && bottomRight.x <= box.right - 160 && bottomRight.y <= box.bottom;
    if (!inside) void flow.setCenter(target.position.x + width / 2, target.position.y + height / 2, { zoom: flow.getZoom() });
  }, [reveal, nodes, flow, dispatch]);
}

/** Where a new node goes: below the one node selected, beside its other children; else the canvas's centre. */
function usePlaceNear(state: EditorState) {
  const flow = useReactFlow();
  const { selected } = state;
  const doc = state.history.present;
  return useCallback((): Point => {
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
}

function useQuickAdd(state: EditorState, dispatch: Dispatch<EditorAction>, { readOnly, actionOutcomes }: Omit<CommandInputs, "canvas">) {
  const { selected } = state;
  const doc = state.history.present;
  const placeNear = usePlaceNear(state);
  return useCallback(
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
      dispatch({ type: "edit", doc: next });
      dispatch({ type: "select", nodes: [added.id] });
      dispatch({ type: "reveal", id: added.id });
      dispatch({ type: "status", text: `Added ${type} ${added.id}${from !== undefined ? ` after ${from.id}` : ""}.` });
    },
    [readOnly, selected, doc, placeNear, actionOutcomes, dispatch],
  );
}

/** Copy, paste and duplicate; the copy also goes to localStorage, so another tab can paste it. */
function useClipboard(state: EditorState, dispatch: Dispatch<EditorAction>, readOnly: boolean) {
  const localClipboard = useRef<Clipboard | null>(null);
  const { selected } = state;
  const doc = state.history.present;
  const shown = shownDoc(state);

  const copySelection = useCallback(() => {
    if (selected.nodes.size === 0) return;
    const clip = copyNodes(shown, selected.nodes);
    localClipboard.current = clip;
    try {
      window.localStorage.setItem(CLIPBOARD_KEY, json(clip));
    } catch {
      /* storage full or disabled: the in-page copy still works */
    }
    dispatch({ type: "status", text: `Copied ${clip.nodes.length} node(s).` });
  }, [selected, shown, dispatch]);

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
      dispatch({ type: "status", text: "Nothing to paste: copy nodes first (Ctrl+C)." });
      return;
    }
    const result = pasteNodes(doc, clip, { x: 48, y: 48 });
    dispatch({ type: "edit", doc: result.doc });
    dispatch({ type: "select", nodes: result.ids });
    dispatch({ type: "reveal", id: result.ids[0] ?? null });
    dispatch({ type: "status", text: `Pasted ${result.ids.length} node(s).` });
  }, [readOnly, doc, dispatch]);

  const duplicate = useCallback(() => {
    if (readOnly || selected.nodes.size === 0) return;
    const result = duplicateNodes(doc, selected.nodes);
    dispatch({ type: "edit", doc: result.doc });
    dispatch({ type: "select", nodes: result.ids });
  }, [readOnly, selected, doc, dispatch]);

  return { copySelection, paste, duplicate };
}

function useFocusProblem({ nodes, edges }: EditorCanvasView, dispatch: Dispatch<EditorAction>) {
  const flow = useReactFlow();
  return useCallback(
    (problem: Problem) => {
      if (problem.node !== null) {
        const node = nodes.find((n) => n.id === problem.node);
        if (node) {
          dispatch({ type: "select", nodes: [node.id] });
          void flow.setCenter(node.position.x + (node.width ?? 232) / 2, node.position.y + (node.height ?? 70) / 2, { zoom: Math.max(flow.getZoom(), 1), duration: 200 });
          document.querySelector<HTMLElement>(`.react-flow__node[data-id="${CSS.escape(node.id)}"]`)?.focus();
        }
      } else if (problem.edge_index !== null) {
        const edge = edges.find((e) => e.data!.index === problem.edge_index);
        const source = nodes.find((n) => n.id === edge?.source);
        const target = nodes.find((n) => n.id === edge?.target);
        if (edge && source && target) {
          dispatch({ type: "select", nodes: [], edges: [edge.id] });
          void flow.setCenter((source.position.x + target.position.x) / 2 + 116, (source.position.y + target.position.y) / 2 + 35, { zoom: Math.max(flow.getZoom(), 1), duration: 200 });
        }
      }
    },
    [nodes, edges, flow, dispatch],
  );
}

export function useEditCommands(state: EditorState, dispatch: Dispatch<EditorAction>, inputs: CommandInputs): EditCommands {
  const flow = useReactFlow();
  const { readOnly, actionOutcomes, canvas } = inputs;
  const { selected } = state;
  const doc = state.history.present;
  useReveal(state.reveal, canvas.nodes, dispatch);
  const quickAdd = useQuickAdd(state, dispatch, inputs);

  const deleteSelection = useCallback(() => {
    if (readOnly || (selected.nodes.size === 0 && selected.edges.size === 0)) return;
    const indices = new Set(canvas.edges.filter((e) => selected.edges.has(e.id)).map((e) => e.data!.index));
    dispatch({ type: "edit", doc: removeElements(doc, selected.nodes, indices) });
    dispatch({ type: "status", text: `Deleted ${selected.nodes.size} node(s) and ${indices.size} edge(s).` });
    dispatch({ type: "select", nodes: [] });
  }, [readOnly, selected, canvas.edges, doc, dispatch]);

  const clipboard = useClipboard(state, dispatch, readOnly);

  const arrange = useCallback(() => {
    if (readOnly) return;
    dispatch({ type: "edit", doc: moveNodes(doc, autoLayout(doc, actionOutcomes)) });
    window.setTimeout(() => void flow.fitView(FIT_VIEW), 0);
    dispatch({ type: "status", text: "Laid out top to bottom, branches and slots in declared order. Undo (Ctrl+Z) reverts." });
  }, [readOnly, doc, actionOutcomes, dispatch, flow]);

  const focusProblem = useFocusProblem(canvas, dispatch);
  return { quickAdd, deleteSelection, ...clipboard, arrange, focusProblem };
}

/** Run the command each key press asks for; `commands` may change every render. */
export function useShortcutKeys(commands: Record<Command, () => void>) {
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
}
