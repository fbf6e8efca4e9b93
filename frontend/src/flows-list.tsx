/**
 * Entry: the flows list on /flows/. The page passes its rows with
 * json_script ("flows-page") and a server-rendered table that this replaces.
 */
import "vite/modulepreload-polyfill";
import "./editor/editor.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { setCsrfToken } from "./editor/api";
import { type FlowRow, FlowsList } from "./editor/FlowsList";

interface PageJson {
  flows: FlowRow[];
  can_edit: boolean;
  csrf_token: string;
}

function mount(): void {
  const element = document.getElementById("flows-root");
  const script = document.getElementById("flows-page");
  if (element === null || script === null) return;
  const data = JSON.parse(script.textContent ?? "{}") as PageJson;
  setCsrfToken(data.csrf_token);
  createRoot(element).render(
    <StrictMode>
      <FlowsList initial={data.flows} canEdit={data.can_edit} />
    </StrictMode>,
  );
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount, { once: true });
else mount();
