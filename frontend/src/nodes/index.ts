import type { ComponentType } from "react";
import type { NodeType } from "../graph/types";
import { BoundaryNode } from "./BoundaryNode";
import { DecisionNode } from "./DecisionNode";
import { IterationNode } from "./IterationNode";
import type { BraidNodeProps } from "./NodeFrame";
import { ParallelNode } from "./ParallelNode";
import { PauseNode } from "./PauseNode";
import { StepNode } from "./StepNode";
import { TerminalNode } from "./TerminalNode";

/**
 * React Flow node component for each of the fifteen node types. Defined once
 * at module scope: a new object per render would remount every node.
 */
export const nodeTypes = {
  start: TerminalNode,
  end: TerminalNode,
  task: StepNode,
  set: StepNode,
  if: DecisionNode,
  switch: DecisionNode,
  fork: ParallelNode,
  gather: ParallelNode,
  race: ParallelNode,
  foreach: IterationNode,
  loop: IterationNode,
  approval: PauseNode,
  wait: PauseNode,
  subflow: BoundaryNode,
  fail: BoundaryNode,
} satisfies Record<NodeType, ComponentType<BraidNodeProps>>;
