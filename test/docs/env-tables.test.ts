import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { EDGECTL_ENV } from "../../edgectl/cli/edgectl-env.js";
import { PUSHER_ENV } from "../../pusher/config.js";
import { ENV_SECTIONS, replaceEnvSections } from "../../scripts/env-docs/env-sections.js";
import {
  renderEnvTable,
  renderWorkerTable,
  replaceBetween,
} from "../../scripts/env-docs/env-table.js";
import { WORKER_VARS } from "../../worker/worker-vars.js";

const root = resolve(import.meta.dirname, "../..");
const reference = () => readFileSync(join(root, "docs/reference.md"), "utf8");

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join(root, dir, f), "utf8"));
}

/** Every `env.NAME`, `env["NAME"]` and `(env, "NAME"` the sources of `dirs` read. */
function variablesRead(dirs: readonly string[]): Set<string> {
  const read = new Set<string>();
  for (const text of dirs.flatMap(sources)) {
    for (const m of text.matchAll(/\benv(?:\.|\[")([A-Z][A-Z0-9_]+)|\(env, "([A-Z][A-Z0-9_]+)"/g)) {
      read.add(m[1] ?? m[2] ?? "");
    }
  }
  return read;
}

function names(vars: readonly { name: string }[]): Set<string> {
  return new Set(vars.flatMap((v) => v.name.split(", ")));
}

describe("docs/reference.md's variable tables are generated from code", () => {
  it("all three are up to date (run npm run docs:env)", () => {
    const doc = reference();
    for (const section of ENV_SECTIONS) {
      const between = doc.slice(
        doc.indexOf(section.markers.begin),
        doc.indexOf(section.markers.end),
      );
      expect(between, `${section.markers.begin}: npm run docs:env`).toContain(section.table());
    }
    expect(replaceEnvSections(doc) === doc, "docs/reference.md is stale: npm run docs:env").toBe(
      true,
    );
  });

  it("a default changed in code makes the doc stale", () => {
    const doc = reference();
    const drifted = doc.replace("| `EDGECTL_LOCK_TTL` | `30` |", "| `EDGECTL_LOCK_TTL` | `31` |");
    expect(drifted).not.toBe(doc);
    expect(replaceEnvSections(drifted)).toBe(doc);
  });

  it("the pusher's table documents every variable the pusher and its adapters read", () => {
    const read = variablesRead(["pusher", "adapters"]);
    expect(read.size).toBeGreaterThan(10);
    const documented = names(PUSHER_ENV);
    expect([...read].filter((name) => !documented.has(name))).toEqual([]);
  });

  it("edgectl's table, with the pusher's it shares, documents every variable edgectl reads", () => {
    const read = variablesRead(["edgectl", "observer"]);
    expect(read.size).toBeGreaterThan(10);
    const documented = new Set([...names(EDGECTL_ENV), ...names(PUSHER_ENV)]);
    expect([...read].filter((name) => !documented.has(name))).toEqual([]);
    const own = [...read].filter((n) => n.startsWith("EDGECTL_"));
    expect(own.filter((name) => !names(EDGECTL_ENV).has(name))).toEqual([]);
  });

  it("the Worker's table names exactly its bindings, vars and secrets", () => {
    const toml = parseToml(readFileSync(join(root, "wrangler.toml"), "utf8")) as {
      vars: Record<string, string>;
      kv_namespaces: { binding: string }[];
      durable_objects: { bindings: { name: string }[] };
    };
    const fromToml = [
      ...Object.keys(toml.vars),
      ...toml.kv_namespaces.map((k) => k.binding),
      ...toml.durable_objects.bindings.map((b) => b.name),
    ];
    // Optional fields of Env and the settings' vars: secrets and vars no config names.
    const fromCode = sources("worker").flatMap((text) =>
      [...text.matchAll(/^\s+readonly ([A-Z][A-Z0-9_]+)\?: string/gm)].map((m) => m[1] ?? ""),
    );
    const expected = new Set([...fromToml, ...fromCode]);
    expect(expected.size).toBeGreaterThan(15);
    expect([...names(WORKER_VARS)].sort()).toEqual([...expected].sort());
  });

  it("puts names and literal defaults in code spans, marks secrets and escapes pipes", () => {
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
    const worker = renderWorkerTable([
      { name: "S", kind: "secret", default: "unset", meaning: "a" },
      { name: "B", kind: "binding", default: "—", meaning: "b" },
    ]);
    expect(worker.split("\n").slice(2)).toEqual([
      "| `S` (secret) | unset | a |",
      "| `B` | — | b |",
    ]);
  });

  it("refuses a doc without the markers, naming them", () => {
    expect(() =>
      replaceBetween("# no table", { begin: "<!-- x:begin -->", end: "<!-- x:end -->" }, "t"),
    ).toThrow("<!-- x:begin -->");
  });
});
