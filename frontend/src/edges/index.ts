import { ROUTED_EDGE } from "../graph/toFlow";
import { RoutedEdge } from "./RoutedEdge";

/** Custom edge components by edge type, defined once at module scope. */
export const edgeTypes = { [ROUTED_EDGE]: RoutedEdge };
