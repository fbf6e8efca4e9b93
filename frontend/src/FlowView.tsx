import {
  Background,
  Controls,
  type DefaultEdgeOptions,
  type FitViewOptions,
  MarkerType,
  MiniMap,
  Panel,
  ReactFlow,
  useReactFlow,
  useStore,
} from "@xyflow/react";
import { type KeyboardEvent, type ReactNode, useEffect, useMemo } from "react";
import { COLOR_CUES, COLORS, type ColorMap, colorClass } from "./graph/colors";
import { layoutBlock, toNestedFlow } from "./graph/nested";
import type { BraidFlowNode, ReasonMap } from "./graph/toFlow";
import type { GraphDocument } from "./graph/types";
import { CANVAS_ZOOM_FLOOR } from "./graph/zoom";
import { edgeTypes } from "./edges";
import { nodeTypes } from "./nodes";
import { SubflowToggle } from "./nodes/SubflowToggle";

const DEFAULT_EDGE_OPTIONS: DefaultEdgeOptions = {
  markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
};
/**
 * Fit the graph clear of the overlays: Controls bottom left, MiniMap bottom
 * right (so a whole right-hand band), and the color key top right.
 */
const OVERLAY_PADDING = { right: "180px", bottom: "24px", left: "64px" } as const;
const FIT_VIEW: FitViewOptions = { padding: { ...OVERLAY_PADDING, top: "24px" }, maxZoom: 1 };
const FIT_VIEW_WITH_KEY: FitViewOptions = { padding: { ...OVERLAY_PADDING, top: "64px" }, maxZoom: 1 };
const MINI_MAP_STYLE = { width: 150, height: 100 };
const NO_COLORS: ColorMap = {};
const NO_REASONS: ReasonMap = {};
const NO_GRAPHS: Readonly<Record<string, GraphDocument>> = {};
const NONE_TOGGLED: ReadonlySet<string> = new Set();
/** React Flow's default screen-reader hints talk about moving and deleting; this view does neither. */
const READ_ONLY_ARIA = {
  "node.a11yDescription.default": "A step of the flow. The graph is read-only.",
  "node.a11yDescription.keyboardDisabled": "A step of the flow. The graph is read-only.",
  "edge.a11yDescription.default": "A connection between two steps. The graph is read-only.",
};

function miniMapClass(node: BraidFlowNode): string {
  return node.data.color === undefined ? "" : colorClass(node.data.color);
}

/** The key to the monitor colors, shown only when the graph is colored. */
function ColorLegend() {
  return (
    <Panel position="top-right" className="braid-legend" aria-label="Color key">
      {COLORS.map((color) => (
        <span key={color} className={`braid-legend__item ${colorClass(color)}`}>
          <span aria-hidden="true">{COLOR_CUES[color].icon}</span> {COLOR_CUES[color].text}
        </span>
      ))}
    </Panel>
  );
}

/** Room kept above a graph whose top is pinned to the canvas's top edge. */
const TOP_MARGIN = 24;

/**
 * Keep the view fitted when the canvas changes size (a side panel opens), centered on
 * `nodeId` when one is given, else on the whole graph. A graph too big for the canvas at
 * the smallest zoom the fit may choose shows its top, centered on its `start` node, rather
 * than its middle: the run begins there, and the rest is a pan away.
 */
function KeepFitted({ options, nodeId }: { options: FitViewOptions; nodeId: string | undefined }) {
  const { fitView, getNodes, getNodesBounds, getViewport, setViewport, getInternalNode } = useReactFlow();
  const width = useStore((state) => state.width);
  const height = useStore((state) => state.height);
  const nodeCount = useStore((state) => state.nodeLookup.size);
  useEffect(() => {
    if (width === 0 || height === 0) return;
    if (nodeId !== undefined) {
      void fitView({ ...options, nodes: [{ id: nodeId }], duration: 200 });
      return;
    }
    void fitView(options).then(() => {
      const bounds = getNodesBounds(getNodes().filter((node) => node.parentId === undefined));
      const { x, zoom } = getViewport();
      if (bounds.height * zoom <= height - TOP_MARGIN) return;
      const start = getInternalNode("start");
      const centerX =
        bounds.width * zoom <= width || start === undefined
          ? x
          : width / 2 - (start.internals.positionAbsolute.x + (start.measured.width ?? 0) / 2) * zoom;
      void setViewport({ x: centerX, y: TOP_MARGIN - bounds.y * zoom, zoom });
    });
  }, [fitView, getNodes, getNodesBounds, getViewport, setViewport, getInternalNode, options, nodeId, width, height, nodeCount]);
  return null;
}

export interface FlowViewProps {
  doc: GraphDocument;
  colors?: ColorMap;
  /** Why each node has its color: a tooltip on hover and focus (the monitor). */
  reasons?: ReasonMap;
  /** Called with the node id when a node is clicked or chosen with Enter (the monitor's inspector). */
  onNodeChoose?: (nodeId: string) => void;
  /** Draw the color key on the canvas (default); a page with its own key passes false. */
  showLegend?: boolean;
  /** The smallest zoom a fit may choose (default: where 12 px text stays 12 px); a larger graph then pans. */
  fitMinZoom?: number;
  /** Refit when the canvas resizes, centered on this node when given (the monitor's inspector). */
  keepFitted?: boolean;
  focusNodeId?: string;
  /** The run's other graphs by key (`slug@version`): each subflow's child graph is drawn inside it. */
  graphs?: Readonly<Record<string, GraphDocument>>;
  /** Subflow paths whose default (open when small) the viewer flipped. */
  toggled?: ReadonlySet<string>;
  /** Called with a subflow node's path when its show/hide button is pressed. */
  onToggleSubflow?: (path: string) => void;
  /** Drawn inside the canvas, where React Flow's hooks work (the run view's camera). */
  children?: ReactNode;
}

/** A read-only React Flow canvas of one `braid.graph/1` document. */
export function FlowView({
  doc,
  colors = NO_COLORS,
  reasons = NO_REASONS,
  onNodeChoose,
  showLegend = true,
  fitMinZoom = CANVAS_ZOOM_FLOOR,
  keepFitted = false,
  focusNodeId,
  graphs = NO_GRAPHS,
  toggled = NONE_TOGGLED,
  onToggleSubflow,
  children,
}: FlowViewProps) {
  const block = useMemo(() => layoutBlock(doc, graphs, toggled), [doc, graphs, toggled]);
  const { nodes, edges } = useMemo(() => toNestedFlow(block, colors, reasons), [block, colors, reasons]);
  const colored = Object.keys(colors).length > 0;
  const keyShown = colored && showLegend;
  const fitViewOptions = useMemo(() => {
    const base = keyShown ? FIT_VIEW_WITH_KEY : FIT_VIEW;
    return { ...base, minZoom: fitMinZoom };
  }, [keyShown, fitMinZoom]);
  const name = typeof doc.name === "string" && doc.name !== "" ? doc.name : "untitled flow";
  return (
    <div className="braid-flow" role="figure" aria-label={`Flow graph: ${name}`}>
      <SubflowToggle.Provider value={onToggleSubflow ?? null}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        defaultEdgeOptions={DEFAULT_EDGE_OPTIONS}
        fitView
        fitViewOptions={fitViewOptions}
        minZoom={0.2}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        edgesReconnectable={false}
        deleteKeyCode={null}
        ariaLabelConfig={READ_ONLY_ARIA}
        {...(onNodeChoose === undefined
          ? {}
          : {
              onNodeClick: (_event: unknown, node: BraidFlowNode) => onNodeChoose(node.id),
              onKeyDown: (event: KeyboardEvent<HTMLDivElement>) => {
                const target = event.target as HTMLElement;
                if (target.closest("button") !== null) return; // a subflow's show/hide button acts by itself
                const id = target.closest<HTMLElement>(".react-flow__node")?.dataset.id;
                if (event.key === "Enter" && id !== undefined) onNodeChoose(id);
              },
            })}
      >
        <Background />
        <Controls showInteractive={false} fitViewOptions={fitViewOptions} />
        <MiniMap
          nodeClassName={miniMapClass}
          style={MINI_MAP_STYLE}
          pannable
          zoomable
          ariaLabel="Mini map of the flow"
        />
        {keyShown && <ColorLegend />}
        {keepFitted && <KeepFitted options={fitViewOptions} nodeId={focusNodeId} />}
        {children}
      </ReactFlow>
      </SubflowToggle.Provider>
    </div>
  );
}

/** The inline message shown in place of a graph that cannot be drawn. */
export function FlowError({ message }: { message: string }) {
  return (
    <div className="braid-flow-error" role="alert">
      <strong>
        <span aria-hidden="true">⚠ </span>Cannot show this flow.
      </strong>{" "}
      {message}
    </div>
  );
}
