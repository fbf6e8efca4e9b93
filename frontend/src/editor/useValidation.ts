/** Validation as you draw: the validate API, called once edits pause. */

import { useEffect, useState } from "react";
import type { GraphDocument } from "../graph/types";
import { api, errorText, flowPath, type Report } from "./api";

export const VALIDATE_DELAY_MS = 400;

/**
 * Validate `doc` through POST /api/flows/<slug>/validate/ 0.4 s after it last
 * changed; a newer document makes an older answer stale. `enabled` is false for
 * callers who may not validate (the API refuses them).
 */
export function useValidation(slug: string, doc: GraphDocument, enabled: boolean, onError: (message: string) => void) {
  const [report, setReport] = useState<Report | null>(null);
  const [checking, setChecking] = useState(enabled);
  useEffect(() => {
    if (!enabled) return;
    let stale = false;
    const timer = window.setTimeout(() => {
      setChecking(true);
      api<Report>("POST", flowPath(slug, "validate/"), { graph: doc })
        .then((result) => !stale && setReport(result))
        .catch((error: unknown) => !stale && onError(`Could not validate: ${errorText(error)}`))
        .finally(() => !stale && setChecking(false));
    }, VALIDATE_DELAY_MS);
    return () => {
      stale = true;
      window.clearTimeout(timer);
    };
  }, [doc, enabled, slug, onError]);
  return { report, setReport, checking };
}
