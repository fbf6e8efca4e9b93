/** Pure TypeScript graph rules for `braid.graph/1`: no React, no DOM. */

export * from "./colors";
export * from "./layout";
export * from "./parse";
export * from "./summary";
export * from "./toFlow";
export * from "./types";
export * from "./path";
export * from "./reason";
export * from "./nested";
export * from "./zoom";
