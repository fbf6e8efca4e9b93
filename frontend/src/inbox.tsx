/**
 * Entry: the approver's inbox at /inbox/. Reads its settings from the `json_script`
 * named by `#inbox-app[data-inbox-config]` and mounts the React page there.
 */
import "vite/modulepreload-polyfill";
import "./inbox/inbox.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Inbox } from "./inbox/Inbox";
import type { InboxConfig } from "./inbox/types";

function readConfig(element: HTMLElement): InboxConfig {
  const script = document.getElementById(element.dataset.inboxConfig ?? "");
  if (!(script instanceof HTMLScriptElement)) throw new Error("The inbox's settings are missing from the page.");
  return JSON.parse(script.textContent ?? "{}") as InboxConfig;
}

function start(): void {
  const element = document.getElementById("inbox-app");
  if (element === null) return;
  const root = createRoot(element);
  try {
    root.render(<StrictMode><Inbox config={readConfig(element)} /></StrictMode>);
  } catch (error) {
    root.render(<p className="error" role="alert">The inbox could not start: {String(error)}. Reload the page.</p>);
  }
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
