import { memo } from "react";
import { type BraidNodeProps, NodeFrame } from "./NodeFrame";

/** `if` and `switch`: a hexagon whose outcomes label the edges leaving it. */
export const DecisionNode = memo(function DecisionNode({ data }: BraidNodeProps) {
  return <NodeFrame data={data} family="decision" />;
});
