/**
 * The flow editor: palette, canvas, side panel, problems, saving, publishing
 * and version history. The document is the one source of truth: every edit
 * is a pure function of it (src/designer) pushed onto the undo history in the
 * editor's reducer (editorState.ts), and the canvas is derived from it.
 */

import { ReactFlowProvider } from "@xyflow/react";
import { type Dispatch, useCallback, useMemo, useReducer, useRef } from "react";
import type { Command } from "../designer/shortcuts";
import { applyFix, quickFix } from "../designer/quickfix";
import type { GraphDocument } from "../graph/types";
import type { Problem } from "./api";
import { EditorCanvas } from "./EditorCanvas";
import { type EditorAction, editorReducer, type EditorPage, type EditorState, graphJson, initialEditorState, isReadOnly, selectedNode, shownDoc } from "./editorState";
import { EditorToolbar } from "./EditorToolbar";
import { Inspector } from "./Inspector";
import { Palette } from "./Palette";
import { ConflictBanner, ProblemsPanel, Shortcuts, VersionBanner, VersionsPanel } from "./panels";
import { TestRunPanel } from "./TestRun";
import { type DraftSaving, useDraftSaving } from "./useDraftSaving";
import { type EditCommands, inEditableField, useEditCommands, useShortcutKeys } from "./useEditCommands";
import { type EditorCanvasView, useCanvasEvents, useCanvasView } from "./useEditorCanvas";
import { useActionCatalog, usePublish, useVersions } from "./usePublishing";
import { useValidation } from "./useValidation";

export function Editor(props: { page: EditorPage }) {
  return (
    <ReactFlowProvider>
      <EditorInner {...props} />
    </ReactFlowProvider>
  );
}

interface PartProps {
  page: EditorPage;
  state: EditorState;
  dispatch: Dispatch<EditorAction>;
  readOnly: boolean;
}

/** The bars above the canvas: a save conflict, the test run, a version on show. */
function Banners({ page, state, dispatch, saving, diff }: PartProps & { saving: DraftSaving; diff: EditorCanvasView["diff"] }) {
  const { conflict, viewing, panels } = state;
  const doc = state.history.present;
  return (
    <>
      {conflict !== null && <ConflictBanner revision={conflict.revision} updatedAt={conflict.updatedAt} onTakeTheirs={saving.takeTheirs} onKeepMine={saving.keepMine} />}
      {panels.testing && viewing === null && (
        <TestRunPanel
          slug={page.slug}
          doc={doc}
          onResult={(result) => dispatch({ type: "tested", tested: result === null ? null : { json: graphJson(doc), result } })}
          onClose={() => dispatch({ type: "testClosed" })}
        />
      )}
      {viewing !== null && diff !== null && (
        <VersionBanner
          version={viewing}
          diff={diff}
          onRestore={page.canEdit ? () => dispatch({ type: "restore", version: viewing }) : undefined}
          onBack={() => dispatch({ type: "view", version: null })}
        />
      )}
    </>
  );
}

/** Beside the canvas: the version history when open, else the inspector of the node selected. */
function SidePanel({ page, state, dispatch, readOnly, problems, actionOutcomes, onSelectNode }: PartProps & { problems: Problem[]; actionOutcomes: Record<string, string[]>; onSelectNode: (id: string | null) => void }) {
  const edit = useCallback((next: GraphDocument) => dispatch({ type: "edit", doc: next }), [dispatch]);
  if (state.panels.versions) {
    return (
      <VersionsPanel
        versions={state.versions}
        viewing={state.viewing}
        onOpen={(version) => dispatch({ type: "view", version })}
        onRestore={page.canEdit ? (version) => dispatch({ type: "restore", version }) : undefined}
        onClose={() => dispatch({ type: "panel", panel: "versions", open: false })}
      />
    );
  }
  return (
    <Inspector
      doc={state.history.present}
      node={selectedNode(state)}
      readOnly={readOnly}
      problems={problems}
      actions={state.actions}
      actionOutcomes={actionOutcomes}
      approvalGroups={page.approvalGroups}
      onChange={edit}
      onSelectNode={onSelectNode}
    />
  );
}

/** What each keyboard shortcut does, read off this render's state. */
function shortcutCommands({ state, dispatch, readOnly }: Omit<PartProps, "page">, commands: EditCommands, saving: DraftSaving, quickAddInput: { current: HTMLInputElement | null }): Record<Command, () => void> {
  return {
    escape: () => dispatch({ type: "escape", inField: inEditableField(document.activeElement) }),
    undo: () => !readOnly && dispatch({ type: "undo" }),
    redo: () => !readOnly && dispatch({ type: "redo" }),
    copy: commands.copySelection,
    paste: commands.paste,
    duplicate: commands.duplicate,
    save: () => void saving.save(),
    selectAll: () => dispatch({ type: "select", nodes: shownDoc(state).nodes.map((n) => n.id) }),
    delete: commands.deleteSelection,
    quickAdd: () => quickAddInput.current?.focus(),
    autoLayout: commands.arrange,
    help: () => dispatch({ type: "panel", panel: "shortcuts", open: "toggle" }),
  };
}

function EditorInner({ page }: { page: EditorPage }) {
  const [state, dispatch] = useReducer(editorReducer, page, initialEditorState);
  const doc = state.history.present;
  const { viewing } = state;
  const quickAddInput = useRef<HTMLInputElement>(null);
  const readOnly = isReadOnly(state, page);
  const actionOutcomes = useMemo(() => Object.fromEntries(state.actions.map((a) => [a.name, a.outcomes])), [state.actions]);
  const say = useCallback((text: string) => dispatch({ type: "status", text }), []);

  useActionCatalog(dispatch);
  const loadVersions = useVersions(page.slug, dispatch);
  const saving = useDraftSaving(page, state, dispatch);
  const { report, setReport, checking } = useValidation(page.slug, doc, page.canEdit, say);
  // Findings are the draft's: a version on show was valid when it was published.
  const problems = useMemo(() => (report === null || viewing !== null ? [] : [...report.errors, ...report.warnings]), [report, viewing]);
  const view = useCanvasView(state, { actionOutcomes, problems, readOnly });
  const events = useCanvasEvents(state, dispatch, { actionOutcomes, readOnly });
  const commands = useEditCommands(state, dispatch, { readOnly, actionOutcomes, canvas: view });
  useShortcutKeys(shortcutCommands({ state, dispatch, readOnly }, commands, saving, quickAddInput));
  const publish = usePublish({ slug: page.slug, doc, saving, loadVersions, setReport }, dispatch);
  const parts = { page, state, dispatch, readOnly };

  return (
    <div className="braid-editor">
      <EditorToolbar {...parts} onSave={() => void saving.save()} onArrange={commands.arrange} onPublish={() => void publish()} />
      <Banners {...parts} saving={saving} diff={view.diff} />
      <div className={readOnly ? "braid-editor__body braid-editor__body--no-palette" : "braid-editor__body"}>
        {!readOnly && <Palette onAdd={(type) => commands.quickAdd(type)} />}
        <EditorCanvas view={view} events={events} readOnly={readOnly} quickAdd={commands.quickAdd} quickAddInput={quickAddInput} />
        <SidePanel {...parts} problems={problems} actionOutcomes={actionOutcomes} onSelectNode={(id) => dispatch({ type: "select", nodes: id === null ? [] : [id] })} />
      </div>
      {page.canEdit && viewing === null && (
        <ProblemsPanel report={report} checking={checking} onFocus={commands.focusProblem} fixFor={(problem) => quickFix(doc, problem)} onFix={(fix) => dispatch({ type: "edit", doc: applyFix(doc, fix) })} />
      )}
      <p className="braid-editor__status" role="status" aria-live="polite">
        {state.status}
      </p>
      {state.panels.shortcuts && <Shortcuts onClose={() => dispatch({ type: "panel", panel: "shortcuts", open: false })} />}
    </div>
  );
}
