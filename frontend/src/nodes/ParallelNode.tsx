import { memo } from "react";
import { type BraidNodeProps, NodeFrame } from "./NodeFrame";

/** `fork`, `gather` and `race`: barred edges; a race's branches return on its right. */
export const ParallelNode = memo(function ParallelNode({ data }: BraidNodeProps) {
  return <NodeFrame data={data} family="parallel" hasReturn={data.kind === "race"} />;
});
