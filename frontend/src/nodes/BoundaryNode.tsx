import { memo } from "react";
import { type BraidNodeProps, NodeFrame } from "./NodeFrame";

/** `subflow` (enters a child scope) and `fail` (ends the scope; nothing leaves it). */
export const BoundaryNode = memo(function BoundaryNode({ data }: BraidNodeProps) {
  return <NodeFrame data={data} family="boundary" hasOutput={data.kind !== "fail"} />;
});
