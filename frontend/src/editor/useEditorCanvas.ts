/**
 * The editor's canvas as React Flow sees it: nodes and edges derived from the
 * editor state (findings, selection, drag, the diff against a version on show,
 * a test run's colors), and the canvas's events turned into editor actions.
 */

import type { Connection as FlowConnection, EdgeChange, FinalConnectionState, NodeChange } from "@xyflow/react";
import { type Dispatch, useCallback, useMemo } from "react";
import { editorCanvas } from "../designer/canvas";
import { diffGraphs, type GraphDiff } from "../designer/diff";
import { checkConnection, type Connection, type ConnectionCheck } from "../designer/handles";
import { addEdge, moveNodes } from "../designer/ops";
import type { EditorEdge, EditorNode } from "../designer/serialize";
import type { Point } from "../graph/types";
import type { Problem } from "./api";
import { type EditorAction, type EditorState, shownDoc, testedNow } from "./editorState";

export interface EditorCanvasView {
  nodes: EditorNode[];
  edges: EditorEdge[];
  /** The diff from the draft to the version on show, when one is. */
  diff: GraphDiff | null;
}

export interface CanvasEvents {
  onNodesChange: (changes: NodeChange<EditorNode>[]) => void;
  onEdgesChange: (changes: EdgeChange<EditorEdge>[]) => void;
  connectionCheck: (connection: Connection) => ConnectionCheck;
  onConnect: (connection: FlowConnection) => void;
  onConnectEnd: (event: MouseEvent | TouchEvent, state: FinalConnectionState) => void;
}

interface CanvasInputs {
  actionOutcomes: Record<string, string[]>;
  problems: Problem[];
  readOnly: boolean;
}

/** The nodes and edges on the canvas, derived from the state; a test run's colors and reasons on the nodes it ran. */
export function useCanvasView(state: EditorState, { actionOutcomes, problems, readOnly }: CanvasInputs): EditorCanvasView {
  const { viewing, dragging, selected } = state;
  const doc = state.history.present;
  const shown = shownDoc(state);
  const tested = testedNow(state);
  const diff: GraphDiff | null = useMemo(() => (viewing === null ? null : diffGraphs(doc, viewing.graph)), [viewing, doc]);

  const { nodes: canvasNodes, edges } = useMemo(
    () =>
      editorCanvas(shown, {
        actionOutcomes,
        findings: problems,
        dragging,
        selectedNodes: selected.nodes,
        selectedEdges: selected.edges,
        readOnly,
        diff,
      }),
    [shown, actionOutcomes, problems, dragging, selected, readOnly, diff],
  );
  const nodes = useMemo(
    () =>
      tested === null
        ? canvasNodes
        : canvasNodes.map((node) => {
            const data = { ...node.data };
            const color = tested.colors[node.id];
            if (color !== undefined) data.color = color;
            const reason = tested.reasons[node.id];
            if (reason !== undefined) data.reason = reason;
            return { ...node, data };
          }),
    [canvasNodes, tested],
  );
  return { nodes, edges, diff };
}

/** Node changes: selection picks, drag positions, and a finished move committed to the document. */
function useNodesChange(state: EditorState, dispatch: Dispatch<EditorAction>, readOnly: boolean) {
  const { dragging } = state;
  const doc = state.history.present;
  return useCallback(
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
      // Picks go through the reducer: React Flow may send several batches before a render.
      if (picks.length > 0) dispatch({ type: "pick", kind: "nodes", picks });
      if (moved !== null) dispatch({ type: "drag", positions: moved });
      if (finished) {
        const positions = moved ?? dragging;
        if (positions !== null && !readOnly) dispatch({ type: "edit", doc: moveNodes(doc, positions) });
        dispatch({ type: "drag", positions: null });
      }
    },
    [dragging, readOnly, doc, dispatch],
  );
}

export function useCanvasEvents(state: EditorState, dispatch: Dispatch<EditorAction>, { actionOutcomes, readOnly }: Omit<CanvasInputs, "problems">): CanvasEvents {
  const doc = state.history.present;
  const onNodesChange = useNodesChange(state, dispatch, readOnly);

  const onEdgesChange = useCallback(
    (changes: EdgeChange<EditorEdge>[]) => {
      const picks = changes.flatMap((change) => (change.type === "select" ? [[change.id, change.selected] as const] : []));
      if (picks.length === 0) return;
      dispatch({ type: "pick", kind: "edges", picks });
    },
    [dispatch],
  );

  const connectionCheck = useCallback((connection: Connection) => checkConnection(doc, connection, actionOutcomes), [doc, actionOutcomes]);

  const onConnect = useCallback(
    (connection: FlowConnection) => {
      const result = connectionCheck(connection);
      if (result.ok) {
        dispatch({ type: "edit", doc: addEdge(doc, result.edge) });
        dispatch({ type: "status", text: `Connected ${connection.source} to ${connection.target}.` });
      } else dispatch({ type: "status", text: result.reason });
    },
    [connectionCheck, doc, dispatch],
  );

  const onConnectEnd = useCallback(
    (_event: MouseEvent | TouchEvent, end: FinalConnectionState) => {
      if (end.isValid || end.fromNode === null || end.toNode === null) return;
      const from = end.fromHandle;
      const to = end.toHandle;
      const [source, sourceHandle, target, targetHandle] =
        from?.type === "target" ? [end.toNode.id, to?.id ?? null, end.fromNode.id, from.id ?? null] : [end.fromNode.id, from?.id ?? null, end.toNode.id, to?.id ?? null];
      const result = connectionCheck({ source, sourceHandle, target, targetHandle });
      if (!result.ok) dispatch({ type: "status", text: `Not connected: ${result.reason}` });
    },
    [connectionCheck, dispatch],
  );

  return { onNodesChange, onEdgesChange, connectionCheck, onConnect, onConnectEnd };
}
