import { memo } from "react";
import { type BraidNodeProps, NodeFrame } from "./NodeFrame";

/** `foreach` and `loop`: a double border; the body returns on the right. */
export const IterationNode = memo(function IterationNode({ data }: BraidNodeProps) {
  return <NodeFrame data={data} family="iteration" hasReturn />;
});
