import { createContext } from "react";

/**
 * Opens and closes a subflow's child graph on the canvas, by the subflow node's path.
 * The run view provides it; without it (the designer, a flow's page) a subflow node
 * draws no toggle.
 */
export const SubflowToggle = createContext<((path: string) => void) | null>(null);
