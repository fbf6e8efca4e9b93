import { memo } from "react";
import { type BraidNodeProps, NodeFrame } from "./NodeFrame";

/** `task` and `set`: a plain step. */
export const StepNode = memo(function StepNode({ data }: BraidNodeProps) {
  return <NodeFrame data={data} family="step" />;
});
