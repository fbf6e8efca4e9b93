/**
 * Entry: the flow editor on /flows/<slug>/. The page passes its data with
 * json_script: {{ page|json_script:"designer-page" }} and <div id="designer-root">.
 */
import "vite/modulepreload-polyfill";
import "@xyflow/react/dist/style.css";
import "./flow-view.css";
import "./editor/editor.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { setCsrfToken } from "./editor/api";
import { Editor } from "./editor/Editor";
import type { EditorPage } from "./editor/editorState";
import { FlowError } from "./FlowView";
import { GraphFormatError, parseGraph, parseJsonText } from "./graph/parse";

interface PageJson {
  slug: string;
  name: string;
  can_edit: boolean;
  csrf_token: string;
  draft: unknown;
  revision: number;
  latest_version: number | null;
  approval_groups?: string[];
}

function mount(): void {
  const element = document.getElementById("designer-root");
  const script = document.getElementById("designer-page");
  if (element === null || script === null) return;
  const root = createRoot(element);
  try {
    const data = parseJsonText(script.textContent ?? "", "The page data") as PageJson;
    setCsrfToken(data.csrf_token);
    const page: EditorPage = {
      slug: data.slug,
      name: data.name,
      canEdit: data.can_edit,
      draft: parseGraph(data.draft),
      revision: data.revision,
      latestVersion: data.latest_version,
      approvalGroups: data.approval_groups ?? [],
    };
    root.render(
      <StrictMode>
        <Editor page={page} />
      </StrictMode>,
    );
  } catch (error) {
    root.render(<FlowError message={error instanceof GraphFormatError ? error.message : String(error)} />);
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount, { once: true });
else mount();
