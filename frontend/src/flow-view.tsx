/**
 * Entry: mounts a read-only graph into every `[data-flow-graph]` element.
 *
 *   {{ graph|json_script:"flow-graph" }}
 *   {{ colors|json_script:"flow-colors" }}   (optional)
 *   <div data-flow-graph="flow-graph" data-flow-colors="flow-colors"></div>
 */
import "vite/modulepreload-polyfill";
import "@xyflow/react/dist/style.css";
import "./flow-view.css";
import { StrictMode } from "react";
import { createRoot, type Root } from "react-dom/client";
import { FlowError, FlowView } from "./FlowView";
import { GraphFormatError, parseColors, parseGraph, parseJsonText } from "./graph/parse";

/** Return the parsed content of the `<script type="application/json" id=…>` Django's json_script wrote. */
function readJsonScript(id: string | undefined, what: string): unknown {
  if (id === undefined || id === "") {
    throw new GraphFormatError(`The ${what} attribute names no json_script id.`);
  }
  const script = document.getElementById(id);
  if (!(script instanceof HTMLScriptElement) || script.type !== "application/json") {
    throw new GraphFormatError(`There is no <script type="application/json" id="${id}"> for ${what}.`);
  }
  return parseJsonText(script.textContent ?? "", `The JSON in #${id}`);
}

function errorMessage(error: unknown): string {
  return error instanceof GraphFormatError ? error.message : `Unexpected error: ${String(error)}`;
}

/** Mount one element's graph (or an inline error) and return its React root. */
export function mountFlowGraph(element: HTMLElement): Root {
  const root = createRoot(element);
  try {
    const doc = parseGraph(readJsonScript(element.dataset.flowGraph, "data-flow-graph"));
    const colors =
      element.dataset.flowColors === undefined
        ? undefined
        : parseColors(readJsonScript(element.dataset.flowColors, "data-flow-colors"));
    root.render(
      <StrictMode>
        <FlowView doc={doc} {...(colors === undefined ? {} : { colors })} />
      </StrictMode>,
    );
  } catch (error) {
    console.error("braid flow view:", error);
    root.render(<FlowError message={errorMessage(error)} />);
  }
  element.dataset.flowMounted = "";
  return root;
}

/** Mount every not yet mounted `[data-flow-graph]` element under `scope`. */
export function mountAllFlowGraphs(scope: ParentNode = document): Root[] {
  const elements = scope.querySelectorAll<HTMLElement>("[data-flow-graph]:not([data-flow-mounted])");
  return Array.from(elements, mountFlowGraph);
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", () => mountAllFlowGraphs(), { once: true });
} else {
  mountAllFlowGraphs();
}
