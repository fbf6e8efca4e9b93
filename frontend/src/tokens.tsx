/**
 * Entry: the API tokens page at /tokens/. Reads its settings from the `json_script` named
 * by `#tokens-app[data-tokens-config]` and mounts the React page there.
 */
import "vite/modulepreload-polyfill";
import "./tokens/tokens.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import type { TokensConfig } from "./tokens/model";
import { TokensPage } from "./tokens/TokensPage";

function readConfig(element: HTMLElement): TokensConfig {
  const script = document.getElementById(element.dataset.tokensConfig ?? "");
  if (!(script instanceof HTMLScriptElement)) throw new Error("The page's settings are missing.");
  return JSON.parse(script.textContent ?? "{}") as TokensConfig;
}

function start(): void {
  const element = document.getElementById("tokens-app");
  if (element === null) return;
  const root = createRoot(element);
  try {
    root.render(<StrictMode><TokensPage config={readConfig(element)} /></StrictMode>);
  } catch (error) {
    root.render(<p className="error" role="alert">The tokens page could not start: {String(error)}. Reload the page.</p>);
  }
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
