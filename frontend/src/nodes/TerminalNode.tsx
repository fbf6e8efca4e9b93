import { memo } from "react";
import { type BraidNodeProps, NodeFrame } from "./NodeFrame";

/** `start` and `end`: a pill; nothing enters a start, nothing leaves an end. */
export const TerminalNode = memo(function TerminalNode({ data }: BraidNodeProps) {
  return (
    <NodeFrame data={data} family="terminal" hasInput={data.kind !== "start"} hasOutput={data.kind !== "end"} />
  );
});
