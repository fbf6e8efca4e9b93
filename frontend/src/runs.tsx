/** Entry: the Runs page, mounted into #runs-app with the data of `json_script` #runs-page. */
import "vite/modulepreload-polyfill";
import "./flow-view.css";
import "./monitor/monitor.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { readPageData } from "./monitor/api";
import { RunsPage, type RunsPageData } from "./monitor/RunsPage";

function mount(): void {
  const element = document.getElementById("runs-app");
  if (element === null) return;
  const root = createRoot(element);
  try {
    const data = readPageData(element.dataset.page) as RunsPageData;
    root.render(
      <StrictMode>
        <RunsPage data={data} />
      </StrictMode>,
    );
  } catch (error) {
    root.render(<p className="error">The Runs page could not start: {String(error)}</p>);
  }
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", mount, { once: true });
} else {
  mount();
}
