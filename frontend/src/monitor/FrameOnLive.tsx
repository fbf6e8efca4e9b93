/**
 * The run view's camera: it opens framed on what is running or waiting (the whole graph when
 * nothing is), never so small that canvas text falls under 12 px on screen; a larger frame
 * pans instead. It frames again when the canvas resizes or a node is inspected. While it
 * follows the live work, it frames again when a live node is out of view; a person who
 * scrolls, drags or clicks on the canvas, or tabs to a node, stops the following (the run
 * view's "Follow live work" starts it again), so their own view is left alone while the
 * run moves.
 */

import { type Node, type ReactFlowState, useReactFlow, useStore, useStoreApi } from "@xyflow/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { type FrameKind, framePadding, frameViewport, liveToFrame, readableZoom, shownWhole } from "./framing";

/** Text to measure at most, so a graph of thousands of nodes costs a bounded look. */
const MEASURED_MAX = 800;
/**
 * How long the camera waits for React Flow to measure every node before it frames on what
 * it has. Twice in CI (2026-12-06 and 12-07) a run view never framed in 10 s though every
 * request was answered in 0.3 s and every node was drawn; the cause is not known, so the
 * frame no longer depends on it, and `data-frame-unmeasured` names the nodes it lacked.
 */
const UNMEASURED_WAIT_MS = 1_000;

/** Whether React Flow has yet to measure a node that is shown. */
function unmeasured(node: { hidden?: boolean; measured: { width?: number } }): boolean {
  return !node.hidden && !(node.measured.width ?? 0);
}

/** The ids of the visible nodes React Flow has not measured. */
function unmeasuredIds(state: ReactFlowState): string[] {
  return [...state.nodeLookup.values()].filter(unmeasured).map((node) => node.id);
}

/**
 * Whether every node has been measured. Not React Flow's `nodesInitialized`: that reads the
 * nodes as given, and a read-only canvas whose nodes come from props never gets measurements back.
 */
function measured(state: ReactFlowState): boolean {
  if (state.nodeLookup.size === 0) return false;
  for (const node of state.nodeLookup.values()) if (unmeasured(node)) return false;
  return true;
}

/** Whether an element holds text of its own (not only through its children). */
function ownsText(element: Element): boolean {
  for (const child of element.childNodes) {
    if (child.nodeType === 3 && (child.textContent ?? "").trim() !== "") return true;
  }
  return false;
}

/** The smallest font size, in CSS pixels, of the visible text on the canvas's nodes and edge labels. */
export function smallestCanvasTextPx(root: ParentNode): number {
  let smallest = Number.POSITIVE_INFINITY;
  const texts = root.querySelectorAll(".react-flow__node *, .react-flow__edge-text, .react-flow__edgelabel-renderer *");
  for (let index = 0; index < texts.length && index < MEASURED_MAX; index++) {
    const element = texts[index]!;
    if (!ownsText(element) || element.closest(".visually-hidden") !== null) continue;
    const style = getComputedStyle(element);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const px = Number.parseFloat(style.fontSize);
    if (px > 0 && px < smallest) smallest = px;
  }
  return smallest;
}

interface Props {
  /** The live node ids, or null until the run's colors first arrive. */
  liveIds: readonly string[] | null;
  /** The inspected node, framed instead while one is. */
  focusId?: string | undefined;
  /** The largest zoom a fit may choose (the canvas's own fit: 1). */
  maxZoom?: number;
  /** Whether to frame again when a live node is out of view. */
  follow?: boolean;
  /** Called when a person moves the view themselves (a scroll, a press or a node tabbed to). */
  onUserMove?: () => void;
  /** A count: each increase frames now (the run view's "Follow live work"). */
  frameAgain?: number;
}

/** How long a frame that follows the live work takes to move there. */
const FOLLOW_MS = 300;

export function FrameOnLive({ liveIds, focusId, maxZoom = 1, follow = false, onUserMove, frameAgain = 0 }: Props) {
  const { getNodes, getNodesBounds, getInternalNode, setViewport } = useReactFlow();
  const store = useStoreApi();
  const width = useStore((state) => state.width);
  const height = useStore((state) => state.height);
  const domNode = useStore((state) => state.domNode);
  const nodeCount = useStore((state) => state.nodeLookup.size);
  const initialized = useStore(measured);
  const live = useRef(liveIds);
  live.current = liveIds;
  const ready = liveIds !== null;
  // What the last frame was chosen for. A color change hands React Flow new node objects,
  // which it measures again (so `initialized` drops and comes back): that alone is no reason
  // to frame again and throw away where a person has panned or zoomed to.
  const framedFor = useRef<string | null>(null);
  const [waitedOut, setWaitedOut] = useState(false);
  useEffect(() => {
    if (initialized || !ready || nodeCount === 0) return;
    const timer = window.setTimeout(() => setWaitedOut(true), UNMEASURED_WAIT_MS);
    return () => window.clearTimeout(timer);
  }, [initialized, ready, nodeCount]);
  /** Frame the inspected node, else the live nodes, else the whole graph; `duration` animates. */
  const frameNow = useCallback(
    (canvas: HTMLDivElement, duration: number | undefined) => {
      const nodes = getNodes();
      const ids = new Set(focusId !== undefined ? [focusId] : (live.current ?? []));
      const chosen: Node[] = nodes.filter((node) => ids.has(node.id));
      const kind: FrameKind = chosen.length > 0 ? "live" : "whole";
      const floor = readableZoom(smallestCanvasTextPx(canvas));
      const padding = framePadding(width);
      const framed = kind === "live"
        ? liveToFrame(chosen, (some) => getNodesBounds([...some]), { width, height }, padding, floor)
        : nodes.filter((node) => node.parentId === undefined);
      if (framed.length === 0) return;
      const start = getInternalNode("start");
      const anchorX = start === undefined ? undefined : start.internals.positionAbsolute.x + (start.measured.width ?? 0) / 2;
      const viewport = frameViewport(getNodesBounds([...framed]), { width, height }, padding,
        { min: floor, max: maxZoom }, kind, anchorX);
      void setViewport(viewport, duration === undefined ? undefined : { duration });
      canvas.dataset.framed = kind;
      canvas.dataset.floor = floor.toFixed(3);
    },
    [focusId, width, height, maxZoom, getNodes, getNodesBounds, getInternalNode, setViewport],
  );
  useEffect(() => {
    const measuredOrWaited = initialized || waitedOut;
    if (!measuredOrWaited || !ready || width === 0 || height === 0 || domNode === null) return;
    const reason = `${width}x${height} ${nodeCount} ${focusId ?? ""} ${maxZoom} ${frameAgain}`;
    // Framed on what was measured, once; a full measurement later frames again, once.
    const wanted = initialized ? reason : `unmeasured ${reason}`;
    if (framedFor.current === reason || framedFor.current === wanted) return;
    const frame = window.requestAnimationFrame(() => {
      framedFor.current = wanted;
      if (!initialized) domNode.dataset.frameUnmeasured = unmeasuredIds(store.getState()).join(" ");
      frameNow(domNode, focusId === undefined ? undefined : 200);
    });
    return () => window.cancelAnimationFrame(frame);
  }, [initialized, waitedOut, ready, width, height, domNode, nodeCount, focusId, maxZoom, frameAgain, frameNow, store]);
  // Following: once framed, a live node out of view (or under an overlay) frames again.
  const liveKey = liveIds === null ? "" : liveIds.join(" ");
  useEffect(() => {
    if (!follow || liveKey === "" || focusId !== undefined || framedFor.current === null || domNode === null) return;
    const frame = window.requestAnimationFrame(() => {
      const [x, y, zoom] = store.getState().transform;
      const padding = framePadding(width);
      const clear = { x: x - padding.left, y: y - padding.top, zoom };
      const room = { width: width - padding.left - padding.right, height: height - padding.top - padding.bottom };
      const ids = new Set(liveKey.split(" "));
      const hidden = getNodes().some((node) => ids.has(node.id) && !node.hidden && !shownWhole(getNodesBounds([node]), clear, room));
      if (!hidden) return;
      frameNow(domNode, FOLLOW_MS);
      domNode.dataset.followed = String(Number(domNode.dataset.followed ?? "0") + 1);
    });
    return () => window.cancelAnimationFrame(frame);
  }, [follow, liveKey, focusId, domNode, width, height, frameNow, getNodes, getNodesBounds, store]);
  // A person's own move stops the following: a scroll, a press on the canvas (a drag, a
  // zoom button, the mini map, a node), or the keyboard's focus on a node.
  useEffect(() => {
    if (domNode === null || onUserMove === undefined) return;
    const moved = () => onUserMove();
    const focused = (event: FocusEvent) => {
      if (event.target instanceof Element && event.target.closest(".react-flow__node") !== null) onUserMove();
    };
    domNode.addEventListener("wheel", moved, { passive: true });
    domNode.addEventListener("pointerdown", moved);
    domNode.addEventListener("focusin", focused);
    return () => {
      domNode.removeEventListener("wheel", moved);
      domNode.removeEventListener("pointerdown", moved);
      domNode.removeEventListener("focusin", focused);
    };
  }, [domNode, onUserMove]);
  return null;
}
