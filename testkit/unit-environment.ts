import { readFileSync } from "node:fs";
import { join } from "node:path";

/** What a systemd unit's `Environment=` lines set that tunes the process's memory. */
export const MEMORY_VARIABLES: readonly string[] = [
  "NODE_OPTIONS",
  "MALLOC_ARENA_MAX",
  "MALLOC_MMAP_THRESHOLD_",
];

/**
 * The memory settings (`MEMORY_VARIABLES`) of a unit's `Environment=` lines, so the soak runs a
 * process as its unit does. Each line holds `NAME=value` words, a word quoted whole when its
 * value has spaces (`Environment="NODE_OPTIONS=--a --b"`).
 */
export function unitMemoryEnvironment(unit: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of unit.split("\n")) {
    const m = /^Environment=(.*)$/.exec(line.trim());
    if (!m?.[1]) continue;
    for (const word of m[1].matchAll(/"([^"]*)"|(\S+)/g)) {
      const text = word[1] ?? word[2] ?? "";
      const eq = text.indexOf("=");
      if (eq <= 0) continue;
      const name = text.slice(0, eq);
      if (MEMORY_VARIABLES.includes(name)) out[name] = text.slice(eq + 1);
    }
  }
  return out;
}

/** The memory settings of the systemd unit `deploy/NAME` in the checkout at `root`. */
export function deployedMemoryEnvironment(root: string, name: string): Record<string, string> {
  return unitMemoryEnvironment(readFileSync(join(root, "deploy", name), "utf8"));
}

/**
 * `env` with `--expose-gc` taken out of its `NODE_OPTIONS`: the process runs without the idle
 * heap trim (adapters/idle-heap-trim.ts needs V8's `gc`), to measure what the trim saves.
 */
export function withoutExposedGc(env: Readonly<Record<string, string>>): Record<string, string> {
  const options = (env.NODE_OPTIONS ?? "")
    .split(/\s+/)
    .filter((o) => o !== "" && o !== "--expose-gc")
    .join(" ");
  const { NODE_OPTIONS: _, ...rest } = env;
  return options ? { ...rest, NODE_OPTIONS: options } : rest;
}
