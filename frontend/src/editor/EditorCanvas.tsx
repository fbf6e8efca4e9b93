/**
 * The editor's canvas: React Flow over the derived nodes and edges, with the
 * grid, controls, mini map, quick-add, the connection tip, dropping a node
 * from the palette, and the opening view.
 */

import {
  Background,
  BackgroundVariant,
  Controls,
  type DefaultEdgeOptions,
  MarkerType,
  MiniMap,
  Panel,
  ReactFlow,
  useReactFlow,
} from "@xyflow/react";
import { type DragEvent, type RefObject, useCallback } from "react";
import { edgeTypes } from "../edges";
import { isNodeType, type NodeType, type Point } from "../graph/types";
import { CANVAS_ZOOM_FLOOR } from "../graph/zoom";
import { nodeTypes } from "../nodes";
import { QuickAdd } from "./Palette";
import { ConnectionTip } from "./panels";
import type { CanvasEvents, EditorCanvasView } from "./useEditorCanvas";

const GRID: [number, number] = [16, 16];
/** At the fitted zoom the canvas's smallest text (12 px) stays at 12 px or more on screen. */
const FIT_MIN_ZOOM = CANVAS_ZOOM_FLOOR;
export const FIT_VIEW = { padding: 0.12, maxZoom: 1, minZoom: FIT_MIN_ZOOM };
const DEFAULT_EDGE_OPTIONS: DefaultEdgeOptions = { markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 } };
const NODE_DRAG_TYPE = "application/x-braid-node";

interface EditorCanvasProps {
  view: EditorCanvasView;
  events: CanvasEvents;
  readOnly: boolean;
  quickAdd: (type: NodeType, at?: Point) => void;
  quickAddInput: RefObject<HTMLInputElement | null>;
}

/**
 * Open on the whole flow when it fits at a readable zoom; otherwise at that
 * zoom with its top in view and the start centred, so the reader starts at
 * the start and pans from there.
 */
function useShowStart() {
  const flow = useReactFlow();
  return useCallback(() => {
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
}

/** A node type dragged from the palette adds that node where it is dropped. */
function useDropNode(readOnly: boolean, quickAdd: EditorCanvasProps["quickAdd"]) {
  const flow = useReactFlow();
  const onDragOver = useCallback((event: DragEvent) => {
    if (event.dataTransfer.types.includes(NODE_DRAG_TYPE)) {
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
    }
  }, []);
  const onDrop = useCallback(
    (event: DragEvent) => {
      const type = event.dataTransfer.getData(NODE_DRAG_TYPE);
      if (!isNodeType(type) || readOnly) return;
      event.preventDefault();
      const at = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY });
      quickAdd(type, { x: at.x - 116, y: at.y - 35 });
    },
    [flow, quickAdd, readOnly],
  );
  return { onDragOver, onDrop };
}

export function EditorCanvas({ view, events, readOnly, quickAdd, quickAddInput }: EditorCanvasProps) {
  const showStart = useShowStart();
  const { onDragOver, onDrop } = useDropNode(readOnly, quickAdd);
  const { connectionCheck } = events;
  return (
    <div className="braid-editor__canvas braid-flow" onDragOver={onDragOver} onDrop={onDrop}>
      <ReactFlow
        nodes={view.nodes}
        edges={view.edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        defaultEdgeOptions={DEFAULT_EDGE_OPTIONS}
        onNodesChange={events.onNodesChange}
        onEdgesChange={events.onEdgesChange}
        onConnect={events.onConnect}
        onConnectEnd={events.onConnectEnd}
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
  );
}
