import { ROUTED_EDGE } from "../graph/toFlow";
import { RETURN_EDGE, ReturnEdge } from "./ReturnEdge";
import { RoutedEdge } from "./RoutedEdge";

/** Custom edge components by edge type, defined once at module scope. */
export const edgeTypes = { [ROUTED_EDGE]: RoutedEdge, [RETURN_EDGE]: ReturnEdge };
