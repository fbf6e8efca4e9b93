/// <reference types="vitest/config" />
import { resolve } from "node:path";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/**
 * Entry points, keyed by their source path. django-vite looks each one up in
 * the manifest by this same path: `{% vite_asset 'src/flow-view.tsx' %}`.
 */
const ENTRIES = [
  "src/flow-view.tsx",
  "src/runs.tsx",
  "src/run-view.tsx",
  "src/inbox.tsx",
  "src/nav-count.ts",
  "src/designer.tsx",
  "src/flows-list.tsx",
  "src/tokens.tsx",
];

/** `src/flow-view.tsx` -> `flow-view`: readable file names in static/dist/assets. */
function entryStem(path: string): string {
  return path.replace(/^.*\//, "").replace(/\.[jt]sx?$/, "");
}

export default defineConfig({
  base: "/static/dist/",
  plugins: [react()],
  build: {
    outDir: resolve(import.meta.dirname, "../static/dist"),
    emptyOutDir: true,
    manifest: true,
    rolldownOptions: {
      input: Object.fromEntries(ENTRIES.map((path) => [path, resolve(import.meta.dirname, path)])),
      output: {
        entryFileNames: (chunk) => `assets/${entryStem(chunk.name)}-[hash].js`,
      },
    },
  },
  test: {
    include: ["tests/**/*.test.{ts,tsx}"],
    environment: "node",
  },
});
