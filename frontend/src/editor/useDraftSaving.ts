/**
 * Saving the editor's draft: autosave after a pause, one save at a time, the
 * revision it started from, a 409's conflict (take theirs or keep mine), and
 * the browser's warning before leaving unsaved edits.
 */

import { type Dispatch, useCallback, useEffect, useRef } from "react";
import type { GraphDocument } from "../graph/types";
import { api, ApiError, errorText, flowPath, type FlowRecord } from "./api";
import { type EditorAction, type EditorPage, type EditorState, json } from "./editorState";

const SAVE_DELAY_MS = 800;

export interface SaveOptions {
  keepReplaced?: boolean;
  baseRevision?: number;
}

export interface DraftSaving {
  /** Save now, after any save under way; resolves to whether it was stored. */
  save: (options?: SaveOptions) => Promise<boolean>;
  /** Whether `draft` is what the server holds. */
  isSaved: (draft: GraphDocument) => boolean;
  /** Save over the other draft, which the server keeps as a DraftRevision. */
  keepMine: () => void;
  /** Load the other draft; undo brings this one back. */
  takeTheirs: () => void;
}

/** PUT the latest draft and report the outcome; the refs carry the server's revision and body. */
function useSaveNow(slug: string, dispatch: Dispatch<EditorAction>, refs: { revision: { current: number }; savedJson: { current: string }; latest: { current: GraphDocument } }) {
  const { revision, savedJson, latest } = refs;
  return useCallback(
    async (options: SaveOptions): Promise<boolean> => {
      const draft = latest.current;
      const body = json(draft);
      if (body === savedJson.current && !options.keepReplaced) {
        dispatch({ type: "saveState", saveState: "saved" });
        return true;
      }
      dispatch({ type: "saveState", saveState: "saving" });
      try {
        const saved = await api<FlowRecord>("PUT", flowPath(slug), {
          draft,
          base_revision: options.baseRevision ?? revision.current,
          ...(options.keepReplaced ? { keep_replaced: true } : {}),
        });
        revision.current = saved.revision;
        savedJson.current = body;
        dispatch({ type: "saved", dirty: json(latest.current) !== body });
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.status === 409 && error.body.code === "flow.draft_conflict") {
          dispatch({ type: "conflict", conflict: { revision: Number(error.body.revision), draft: error.body.draft as GraphDocument, updatedAt: String(error.body.updated_at) } });
        } else {
          dispatch({ type: "saveFailed", message: errorText(error) });
        }
        return false;
      }
    },
    // The refs are the component's own and never change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [slug],
  );
}

export function useDraftSaving(page: EditorPage, state: EditorState, dispatch: Dispatch<EditorAction>): DraftSaving {
  const doc = state.history.present;
  const { conflict, saveState } = state;
  const revision = useRef(page.revision);
  // The draft as loaded, with positions filled in for nodes that had none: not an unsaved edit.
  const savedJson = useRef(json(doc));
  const saving = useRef<Promise<boolean> | null>(null);
  const latest = useRef(doc);
  latest.current = doc;

  const saveNow = useSaveNow(page.slug, dispatch, { revision, savedJson, latest });

  /** PUT the latest draft; one save at a time, so that a second never races the first's revision. */
  const save = useCallback(
    (options: SaveOptions = {}): Promise<boolean> => {
      const next = (saving.current ?? Promise.resolve(true)).then(() => saveNow(options));
      saving.current = next;
      return next;
    },
    [saveNow],
  );

  useEffect(() => {
    if (!page.canEdit || conflict !== null) return;
    if (json(doc) === savedJson.current) {
      if (saveState === "dirty") dispatch({ type: "saveState", saveState: "saved" });
      return;
    }
    dispatch({ type: "draftChanged" });
    const timer = window.setTimeout(() => void save(), SAVE_DELAY_MS);
    return () => window.clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [doc, conflict]);

  useEffect(() => {
    const warn = (event: BeforeUnloadEvent) => {
      if (page.canEdit && json(doc) !== savedJson.current) event.preventDefault();
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [doc, page.canEdit]);

  const isSaved = useCallback((draft: GraphDocument) => json(draft) === savedJson.current, []);

  const keepMine = useCallback(() => {
    if (conflict === null) return;
    void save({ keepReplaced: true, baseRevision: conflict.revision });
  }, [conflict, save]);

  const takeTheirs = useCallback(() => {
    if (conflict === null) return;
    revision.current = conflict.revision;
    savedJson.current = json(conflict.draft);
    dispatch({ type: "theirsTaken", draft: conflict.draft });
  }, [conflict, dispatch]);

  return { save, isSaved, keepMine, takeTheirs };
}
