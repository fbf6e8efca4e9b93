/**
 * What the editor reads from the server besides the draft, and publishing:
 * the action catalog, the flow's versions, and Publish (after saving the
 * draft), whose refusal lists its findings in Problems.
 */

import { type Dispatch, useCallback, useEffect } from "react";
import type { GraphDocument } from "../graph/types";
import { type ActionInfo, api, ApiError, errorText, flowPath, type Problem, type Report, type VersionRecord } from "./api";
import type { EditorAction } from "./editorState";
import type { DraftSaving } from "./useDraftSaving";

/** Load the action catalog once; without it, tasks offer no outcomes but `next`. */
export function useActionCatalog(dispatch: Dispatch<EditorAction>) {
  useEffect(() => {
    api<ActionInfo[]>("GET", "/api/actions/").then(
      (actions) => dispatch({ type: "actionsLoaded", actions }),
      () => dispatch({ type: "actionsLoaded", actions: [] }),
    );
  }, [dispatch]);
}

/** Load the flow's versions now; return the function that loads them again. */
export function useVersions(slug: string, dispatch: Dispatch<EditorAction>): () => void {
  const loadVersions = useCallback(() => {
    api<{ results: VersionRecord[] }>("GET", flowPath(slug, "versions/?limit=100")).then(
      (body) => dispatch({ type: "versionsLoaded", versions: body.results }),
      (error: unknown) => dispatch({ type: "status", text: `Could not load the versions: ${errorText(error)}` }),
    );
  }, [slug, dispatch]);
  useEffect(loadVersions, [loadVersions]);
  return loadVersions;
}

interface PublishInputs {
  slug: string;
  doc: GraphDocument;
  saving: Pick<DraftSaving, "save" | "isSaved">;
  loadVersions: () => void;
  setReport: (report: Report) => void;
}

/** Publish the draft, saving it first; a refusal's findings go to Problems. */
export function usePublish({ slug, doc, saving, loadVersions, setReport }: PublishInputs, dispatch: Dispatch<EditorAction>) {
  const { save, isSaved } = saving;
  return useCallback(async () => {
    dispatch({ type: "publishing", publishing: true });
    try {
      if (!isSaved(doc) && !(await save())) {
        dispatch({ type: "status", text: "Publishing needs the draft saved first." });
        return;
      }
      const version = await api<VersionRecord>("POST", flowPath(slug, "publish/"));
      dispatch({ type: "published", version: version.number });
      loadVersions();
    } catch (error) {
      if (error instanceof ApiError && Array.isArray(error.body.errors)) {
        setReport({ ok: false, errors: error.body.errors as Problem[], warnings: (error.body.warnings as Problem[] | undefined) ?? [] });
        dispatch({ type: "status", text: `Not published: ${errorText(error)}. See Problems.` });
      } else dispatch({ type: "status", text: `Not published: ${errorText(error)}` });
    } finally {
      dispatch({ type: "publishing", publishing: false });
    }
  }, [doc, save, isSaved, slug, loadVersions, setReport, dispatch]);
}
