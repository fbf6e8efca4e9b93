/** The editor's toolbar: the flow's name, the save state, undo and redo, auto-layout, publish, test run, history, export, shortcuts. */

import type { Dispatch } from "react";
import { flowPath } from "./api";
import { type EditorAction, type EditorPage, type EditorState, redoable, SAVE_TEXT, undoable } from "./editorState";

interface EditorToolbarProps {
  page: EditorPage;
  state: EditorState;
  readOnly: boolean;
  dispatch: Dispatch<EditorAction>;
  onSave: () => void;
  onArrange: () => void;
  onPublish: () => void;
}

function SaveStatus({ state, onSave }: Pick<EditorToolbarProps, "state" | "onSave">) {
  const { saveState, saveError } = state;
  return (
    <span className={`braid-save braid-save--${saveState}`} role="status" aria-live="polite" title={saveState === "error" ? saveError : ""}>
      {SAVE_TEXT[saveState]}
      {saveState === "error" && (
        <>
          {" "}
          <button type="button" onClick={onSave}>
            Retry
          </button>
        </>
      )}
    </span>
  );
}

/** Undo, Redo, Auto-layout and Publish: for those who may edit. */
function EditButtons({ state, readOnly, dispatch, onArrange, onPublish }: Omit<EditorToolbarProps, "page" | "onSave">) {
  const { publishing, saveState } = state;
  return (
    <>
      <button type="button" onClick={() => dispatch({ type: "undo" })} disabled={readOnly || !undoable(state)} aria-keyshortcuts="Control+Z">
        Undo
      </button>
      <button type="button" onClick={() => dispatch({ type: "redo" })} disabled={readOnly || !redoable(state)} aria-keyshortcuts="Control+Shift+Z">
        Redo
      </button>
      <button type="button" onClick={onArrange} disabled={readOnly} aria-keyshortcuts="Shift+L">
        Auto-layout
      </button>
      <button type="button" className="braid-primary" onClick={onPublish} disabled={readOnly || publishing || saveState === "conflict"}>
        {publishing ? "Publishing…" : "Publish"}
      </button>
    </>
  );
}

export function EditorToolbar(props: EditorToolbarProps) {
  const { page, state, dispatch } = props;
  const { latestVersion, viewing, panels } = state;
  return (
    <div className="braid-editor__toolbar" role="toolbar" aria-label="Flow editor">
      <h1 className="braid-editor__title">
        {state.history.present.name ?? page.name} <code>{page.slug}</code>
      </h1>
      <SaveStatus state={state} onSave={props.onSave} />
      {page.canEdit && <EditButtons {...props} />}
      <span className="braid-editor__version">{latestVersion === null ? "Not published yet" : `Latest: v${latestVersion}`}</span>
      {page.canEdit && (
        <button type="button" onClick={() => dispatch({ type: "panel", panel: "testing", open: "toggle" })} aria-expanded={panels.testing} disabled={viewing !== null}>
          Test run
        </button>
      )}
      <button type="button" onClick={() => dispatch({ type: "panel", panel: "versions", open: "toggle" })} aria-expanded={panels.versions}>
        History
      </button>
      <a className="braid-button" href={flowPath(page.slug, "export/")} download={`${page.slug}.json`}>
        Export
      </a>
      <button type="button" onClick={() => dispatch({ type: "panel", panel: "shortcuts", open: true })} aria-label="Keyboard shortcuts">
        ?
      </button>
    </div>
  );
}
