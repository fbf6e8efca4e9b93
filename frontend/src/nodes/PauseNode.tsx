import { memo } from "react";
import { type BraidNodeProps, NodeFrame } from "./NodeFrame";

/** `approval` and `wait`: steps that suspend their frame; a dashed border. */
export const PauseNode = memo(function PauseNode({ data }: BraidNodeProps) {
  return <NodeFrame data={data} family="pause" />;
});
