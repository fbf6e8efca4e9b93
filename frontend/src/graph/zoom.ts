/**
 * How far the canvas may zoom out when it fits a graph to the view: no further than
 * where its smallest text would fall below a readable size on screen (UI.md: 12 px).
 * A graph bigger than the canvas at that zoom pans instead of shrinking.
 */

/** The smallest text size, in screen pixels, that the canvas shows at a fitted zoom. */
export const READABLE_PX = 12;

/**
 * The smallest font size, in CSS pixels, of any text drawn on the canvas: node badges,
 * summaries and titles, port labels, edge labels (flow-view.css and editor.css). A browser
 * test measures every text on the canvas at the fitted zoom, so this cannot drift unseen.
 */
export const SMALLEST_CANVAS_FONT_PX = 12;

/** Return the smallest zoom at which text of `smallestFontPx` CSS pixels shows at `readablePx` or more. */
export function zoomFloor(smallestFontPx: number, readablePx: number = READABLE_PX): number {
  if (!Number.isFinite(smallestFontPx) || smallestFontPx <= 0) {
    throw new RangeError(`the smallest font size must be a positive number of pixels, not ${smallestFontPx}`);
  }
  if (!Number.isFinite(readablePx) || readablePx <= 0) {
    throw new RangeError(`the readable size must be a positive number of pixels, not ${readablePx}`);
  }
  return readablePx / smallestFontPx;
}

/** The canvases' fit-to-view floor (the editor's and the run view's): 12 px text stays 12 px. */
export const CANVAS_ZOOM_FLOOR = zoomFloor(SMALLEST_CANVAS_FONT_PX);
