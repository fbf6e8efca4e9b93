/**
 * Types for the `braid.graph/1` document (CONTRACT.md §1).
 *
 * String-literal unions play the part the core's StrEnums play: the compiler
 * rejects a misspelt node type, and `switch` over `node.type` is checked for
 * exhaustiveness.
 */

export const GRAPH_FORMAT = "braid.graph/1";

/** The fifteen node types, in the contract's table order. */
export const NODE_TYPES = [
  "start",
  "end",
  "task",
  "set",
  "if",
  "switch",
  "fork",
  "gather",
  "foreach",
  "loop",
  "race",
  "approval",
  "wait",
  "subflow",
  "fail",
] as const;

export type NodeType = (typeof NODE_TYPES)[number];

export type Reducer = "overwrite" | "append" | "sum" | "min" | "max" | "merge" | "union";

/** A CEL expression, kept as source text. */
export type Cel = string;

export interface StateField {
  reducer: Reducer;
  default?: unknown;
}

interface NodeOf<T extends NodeType> {
  id: string;
  type: T;
}

export type StartNode = NodeOf<"start">;
export type EndNode = NodeOf<"end">;

export interface TaskNode extends NodeOf<"task"> {
  action: string;
  params?: Record<string, unknown>;
  output?: string;
  retry?: { max_attempts: number; backoff_s: number };
  timeout_s?: number;
}

export interface SetNode extends NodeOf<"set"> {
  values: Record<string, Cel>;
}

export interface IfNode extends NodeOf<"if"> {
  condition: Cel;
}

export interface SwitchCase {
  when: Cel;
  outcome: string;
}

export interface SwitchNode extends NodeOf<"switch"> {
  cases: SwitchCase[];
  default: string;
}

export interface ForkNode extends NodeOf<"fork"> {
  branches: string[];
}

export interface GatherNode extends NodeOf<"gather"> {
  slots: string[];
  conflicts: "error";
}

export type ItemFailurePolicy = "fail" | "skip" | "collect";

export interface ForeachNode extends NodeOf<"foreach"> {
  items: Cel;
  as: string;
  concurrency?: number;
  on_item_failure?: ItemFailurePolicy;
  errors?: string;
}

export interface LoopNode extends NodeOf<"loop"> {
  while: Cel;
  max_iterations?: number;
}

export interface RaceNode extends NodeOf<"race"> {
  branches: string[];
}

export type ApprovalPolicy = "all" | "any" | { quorum: number };

export interface ApprovalNode extends NodeOf<"approval"> {
  groups: string[];
  policy: ApprovalPolicy;
  /** Text in which `${CEL}` is interpolated at run time; shown raw here. */
  title?: string;
  instructions?: string;
  /** CEL expressions whose values approvers see beside the request. */
  show?: Cel[];
  /** Seconds after opening when the request counts as overdue. */
  due_in_s?: number;
  /** Whether the run's starter may decide (default false: segregation of duties). */
  allow_starter?: boolean;
}

export interface WaitNode extends NodeOf<"wait"> {
  seconds?: number;
  until?: Cel;
}

export interface SubflowNode extends NodeOf<"subflow"> {
  flow: string;
  version?: number;
  input?: Record<string, Cel>;
  output?: Record<string, string>;
}

export interface FailNode extends NodeOf<"fail"> {
  error: string;
}

export type GraphNode =
  | StartNode
  | EndNode
  | TaskNode
  | SetNode
  | IfNode
  | SwitchNode
  | ForkNode
  | GatherNode
  | ForeachNode
  | LoopNode
  | RaceNode
  | ApprovalNode
  | WaitNode
  | SubflowNode
  | FailNode;

export interface GraphEdge {
  id?: string;
  source: string;
  target: string;
  /** Absent means `"next"`; a `branch` edge has none. */
  outcome?: string;
  /** Only on edges leaving a fork or race. */
  branch?: string;
  /** Present exactly when the target is a gather. */
  slot?: string;
}

export interface Point {
  x: number;
  y: number;
}

export interface GraphDocument {
  format: typeof GRAPH_FORMAT;
  name?: string;
  state?: Record<string, StateField>;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Designer positions by node id; never affects execution. */
  layout?: Record<string, Point>;
}

/** Node types whose body returns by an edge whose target is the node itself. */
export const RETURN_TARGET_TYPES: ReadonlySet<NodeType> = new Set(["foreach", "loop", "race"]);

export function isNodeType(value: unknown): value is NodeType {
  return typeof value === "string" && (NODE_TYPES as readonly string[]).includes(value);
}
