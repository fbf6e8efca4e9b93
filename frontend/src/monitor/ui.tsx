/** Small pieces the monitor pages share: times, status pills, a windowed list. */

import { type KeyboardEvent, type ReactNode, useEffect, useRef, useState } from "react";
import { COLOR_CUES, type Color, colorClass, isColor } from "../graph/colors";
import { windowRange } from "./executions";
import { absoluteTime, relativeTime } from "./time";

/** The current time, refreshed every `everyMs` so relative times stay true. */
export function useNow(everyMs = 15_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), everyMs);
    return () => window.clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** "3 min ago", with the absolute time in a tooltip and in `dateTime`. */
export function RelativeTime({ iso, now }: { iso: string; now: number }) {
  return (
    <time dateTime={iso} title={absoluteTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}

/** A status with its icon and name, colored like the graph (never hue alone). */
export function StatusPill({ status }: { status: string }) {
  const color: Color | null = isColor(status) ? status : null;
  return (
    <span className={`status-pill ${color === null ? "" : colorClass(color)}`}>
      <span aria-hidden="true">{color === null ? "?" : COLOR_CUES[color].icon}</span> {status}
    </span>
  );
}

interface VirtualListProps<T> {
  items: readonly T[];
  rowHeight: number;
  height: number;
  label: string;
  renderRow: (item: T, index: number) => ReactNode;
  rowKey: (item: T, index: number) => string;
}

/**
 * A fixed-row-height windowed list: only the rows in view (plus a few) are in the DOM,
 * so 10,000 executions cost a few dozen elements.
 */
export function VirtualList<T>({ items, rowHeight, height, label, renderRow, rowKey }: VirtualListProps<T>) {
  const [scrollTop, setScrollTop] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  const [first, last] = windowRange(scrollTop, height, rowHeight, items.length);
  const shown = [];
  for (let index = first; index < last; index++) {
    shown.push(
      <div
        key={rowKey(items[index]!, index)}
        role="listitem"
        className="vlist__row"
        style={{ top: index * rowHeight, height: rowHeight }}
      >
        {renderRow(items[index]!, index)}
      </div>,
    );
  }
  return (
    <div
      ref={box}
      className="vlist"
      style={{ height }}
      onScroll={(event) => setScrollTop(event.currentTarget.scrollTop)}
      role="list"
      aria-label={label}
      data-total={items.length}
    >
      <div className="vlist__inner" style={{ height: items.length * rowHeight }}>
        {shown}
      </div>
    </div>
  );
}

/** The `?` list of keyboard shortcuts (UI.md). */
export function Shortcuts({ open, onClose, items }: { open: boolean; onClose: () => void; items: ReadonlyArray<[string, string]> }) {
  return (
    <div className="shortcuts" role="dialog" aria-label="Keyboard shortcuts" hidden={!open}>
      <strong>Keyboard</strong>
      <ul>
        {items.map(([key, what]) => (
          <li key={key}>
            <kbd>{key}</kbd> {what}
          </li>
        ))}
      </ul>
      <button type="button" className="secondary" onClick={onClose}>
        Close
      </button>
    </div>
  );
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/** Keep Tab inside `box`: from its last control to its first, and back with Shift+Tab. */
export function trapTab(event: KeyboardEvent | globalThis.KeyboardEvent, box: HTMLElement): void {
  if (event.key !== "Tab") return;
  const controls = [...box.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((element) => !element.hidden);
  if (controls.length === 0) return;
  const first = controls[0]!;
  const last = controls[controls.length - 1]!;
  const active = document.activeElement;
  if (event.shiftKey && (active === first || !box.contains(active))) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && (active === last || !box.contains(active))) {
    event.preventDefault();
    first.focus();
  }
}

interface DialogProps {
  open: boolean;
  onClose: () => void;
  /** The id of the element that names the dialog (its heading). */
  labelledBy: string;
  describedBy?: string;
  children: ReactNode;
}

/**
 * A modal dialog: the page behind it is inert, Tab stays inside, Escape closes it, and focus
 * returns to what opened it. Its first field (else its first control) takes the focus.
 */
export function Dialog({ open, onClose, labelledBy, describedBy, children }: DialogProps) {
  const box = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const dialog = box.current;
    if (dialog === null) return;
    if (open && !dialog.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
      const first = dialog.querySelector<HTMLElement>("textarea, input, select") ?? dialog.querySelector<HTMLElement>(FOCUSABLE);
      first?.focus();
    } else if (!open && dialog.open) {
      dialog.close();
      opener.current?.focus();
    }
  }, [open]);
  return (
    <dialog
      ref={box}
      className="modal"
      aria-labelledby={labelledBy}
      aria-describedby={describedBy}
      onCancel={(event) => {
        event.preventDefault(); // Escape: closed through onClose, so the state says so too
        onClose();
      }}
      onClose={() => {
        // The browser may close it by itself (a second Escape in a row): the state follows.
        if (open) onClose();
      }}
      onKeyDown={(event) => {
        if (box.current !== null) trapTab(event, box.current);
      }}
    >
      {open && children}
    </dialog>
  );
}
