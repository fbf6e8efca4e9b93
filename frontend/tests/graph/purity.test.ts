import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";

const GRAPH_DIR = join(import.meta.dirname, "../../src/graph");

/** Module specifiers imported for their values (not `import type`) by one source file. */
function valueImports(source: string): string[] {
  const imports = source.matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)";/gms);
  return [...imports].map((match) => match[1]!);
}

test("src/graph imports nothing at run time but itself and dagre", () => {
  const external = readdirSync(GRAPH_DIR)
    .filter((name) => name.endsWith(".ts"))
    .flatMap((name) => valueImports(readFileSync(join(GRAPH_DIR, name), "utf8")))
    .filter((specifier) => !specifier.startsWith("./"));
  expect([...new Set(external)]).toEqual(["@dagrejs/dagre"]);
});
