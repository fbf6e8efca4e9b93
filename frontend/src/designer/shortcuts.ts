/** The editor's keyboard shortcuts: a key press -> the command it asks for. Pure. */

export type Command =
  | "escape"
  | "undo"
  | "redo"
  | "copy"
  | "paste"
  | "duplicate"
  | "save"
  | "selectAll"
  | "delete"
  | "quickAdd"
  | "autoLayout"
  | "help";

export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  /** Whether focus is in a text field, where keys type (only Escape is taken). */
  inField: boolean;
}

const WITH_MODIFIER: Record<string, Command> = { c: "copy", v: "paste", d: "duplicate", s: "save", a: "selectAll", y: "redo" };

/** Return the command a key press asks for, or null when it is not a shortcut. */
export function commandFor(press: KeyPress): Command | null {
  if (press.key === "Escape") return "escape";
  if (press.inField) return null;
  const key = press.key.toLowerCase();
  if (press.ctrlKey || press.metaKey) {
    if (key === "z") return press.shiftKey ? "redo" : "undo";
    return WITH_MODIFIER[key] ?? null;
  }
  if (press.key === "Delete" || press.key === "Backspace") return "delete";
  if (press.key === "/") return "quickAdd";
  if (press.key === "?") return "help";
  if (key === "l" && press.shiftKey) return "autoLayout";
  return null;
}
