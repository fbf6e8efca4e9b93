import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";

const DESIGNER_DIR = join(import.meta.dirname, "../../src/designer");

test("the editing model in src/designer/*.ts imports no React: only itself, src/graph and the pure form model", () => {
  const specifiers = readdirSync(DESIGNER_DIR)
    .filter((name) => name.endsWith(".ts"))
    .flatMap((name) => [...readFileSync(join(DESIGNER_DIR, name), "utf8").matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)";/gms)])
    .map((match) => match[1]!);
  expect(specifiers.filter((s) => !s.startsWith("./") && !s.startsWith("../graph/") && s !== "../forms/model")).toEqual([]);
});

test("the form model (src/forms/model.ts, draft.ts) imports nothing but itself", () => {
  const dir = join(import.meta.dirname, "../../src/forms");
  const specifiers = ["model.ts", "draft.ts"]
    .flatMap((name) => [...readFileSync(join(dir, name), "utf8").matchAll(/^import\s+[^;]*?from\s+"([^"]+)";/gms)])
    .map((match) => match[1]!);
  expect(specifiers).toEqual(["./model"]);
});
