import {
  Background,
  ControlButton,
  Controls,
  type DefaultEdgeOptions,
  type FitViewOptions,
  MarkerType,
  MiniMap,
  Panel,
  ReactFlow,
  getViewportForBounds,
  useReactFlow,
  useStoreApi,
} from "@xyflow/react";
import { type KeyboardEvent, type ReactNode, useMemo } from "react";
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

/**
 * The Fit View button of a read-only canvas: it fits at once from the measured nodes.
 * React Flow's own `fitView` queues the fit for the nodes' next pass through its update
 * path, which on a canvas drawn from props (no `onNodesChange`) has failed upstream
 * (xyflow #5132) and once left a press here without a fit for 10 s; a queued fit landing
 * late would also move the view under a person's panning (docs/admin-actions.md).
 * The icon is React Flow's.
 */
function FitButton({ options }: { options: FitViewOptions }) {
  const store = useStoreApi();
  const { getNodes, getNodesBounds, setViewport } = useReactFlow();
  const fit = () => {
    const { width, height, minZoom, maxZoom } = store.getState();
    const nodes = getNodes().filter((node) => node.parentId === undefined && node.hidden !== true);
    if (nodes.length === 0 || width === 0 || height === 0) return;
    const bounds = getNodesBounds(nodes);
    const zoomMin = options.minZoom ?? minZoom;
    const zoomMax = options.maxZoom ?? maxZoom;
    void setViewport(getViewportForBounds(bounds, width, height, zoomMin, zoomMax, options.padding ?? 0.1));
  };
  return (
    <ControlButton onClick={fit} className="react-flow__controls-fitview" title="Fit View" aria-label="Fit View">
      <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 30" aria-hidden="true">
        <path d="M3.692 4.63c0-.53.4-.938.939-.938h5.215V0H4.708C2.13 0 0 2.054 0 4.63v5.216h3.692V4.631zM27.354 0h-5.2v3.692h5.17c.53 0 .984.4.984.939v5.215H32V4.631A4.624 4.624 0 0027.354 0zm.954 24.83c0 .532-.4.94-.939.94h-5.215v3.768h5.215c2.577 0 4.631-2.13 4.631-4.707v-5.139h-3.692v5.139zm-23.677.94c-.531 0-.939-.4-.939-.94v-5.138H0v5.139c0 2.577 2.13 4.707 4.708 4.707h5.138V25.77H4.631z" />
      </svg>
    </ControlButton>
  );
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
        <Controls showInteractive={false} showFitView={false}>
          <FitButton options={fitViewOptions} />
        </Controls>
        <MiniMap
          nodeClassName={miniMapClass}
          style={MINI_MAP_STYLE}
          pannable
          zoomable
          ariaLabel="Mini map of the flow"
        />
        {keyShown && <ColorLegend />}
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
