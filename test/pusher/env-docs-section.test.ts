import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PUSHER_ENV } from "../../pusher/config.js";
import { renderEnvTable, replaceEnvTableSection } from "../../pusher/env-docs-section.js";

const root = resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join(root, dir, f), "utf8"));
}

describe("docs/reference.md §5's variable table is generated from PUSHER_ENV", () => {
  it("is up to date with pusher/config.ts (run npm run docs:pusher-env)", () => {
    const doc = readFileSync(join(root, "docs/reference.md"), "utf8");
    expect(
      replaceEnvTableSection(doc) === doc,
      "docs/reference.md is stale: npm run docs:pusher-env",
    ).toBe(true);
  });

  it("documents every variable the pusher and its adapters read", () => {
    const documented = new Set(PUSHER_ENV.flatMap((v) => v.name.split(", ")));
    const read = new Set<string>();
    for (const text of [...sources("pusher"), ...sources("adapters")]) {
      for (const m of text.matchAll(
        /\benv(?:\.|\[")([A-Z][A-Z0-9_]+)|\(env, "([A-Z][A-Z0-9_]+)"/g,
      )) {
        read.add(m[1] ?? m[2] ?? "");
      }
    }
    expect(read.size).toBeGreaterThan(10);
    expect([...read].filter((name) => !documented.has(name))).toEqual([]);
  });

  it("puts names and literal defaults in code spans and escapes pipes", () => {
    const table = renderEnvTable([
      { name: "A_B, C_D", default: "unset", meaning: "x | y", details: "more" },
      { name: "E", default: "127.0.0.1:1", meaning: "z" },
      { name: "F", default: "the id in wrangler.toml", meaning: "w" },
    ]);
    expect(table.split("\n").slice(2)).toEqual([
      "| `A_B`, `C_D` | unset | x \\| y; more |",
      "| `E` | `127.0.0.1:1` | z |",
      "| `F` | the id in wrangler.toml | w |",
    ]);
  });
});
