/** Entry: one run's view, mounted into #run-app with the data of `json_script` #run-page. */
import "vite/modulepreload-polyfill";
import "@xyflow/react/dist/style.css";
import "./flow-view.css";
import "./monitor/monitor.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { readPageData } from "./monitor/api";
import { RunView, type RunViewData } from "./monitor/RunView";

function mount(): void {
  const element = document.getElementById("run-app");
  if (element === null) return;
  const root = createRoot(element);
  try {
    const data = readPageData(element.dataset.page) as RunViewData;
    root.render(
      <StrictMode>
        <RunView data={data} />
      </StrictMode>,
    );
  } catch (error) {
    root.render(<p className="error">The run view could not start: {String(error)}</p>);
  }
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", mount, { once: true });
} else {
  mount();
}
