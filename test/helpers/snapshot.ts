import type { CompileOptions, Snapshot } from "../../core/index.js";

/** The prefix core tests use. */
export const P = "/t/";

/** Builds a snapshot from relative keys; objects are JSON-encoded, strings and bytes kept as is. */
export function snap(kv: Record<string, unknown>, revision = 10): Snapshot {
  return {
    revision,
    entries: Object.entries(kv).map(([k, v]) => ({
      key: `${P}${k}`,
      value: typeof v === "string" || v instanceof Uint8Array ? v : JSON.stringify(v),
    })),
  };
}

/** Compile options for tests, with a fixed clock. */
export function opts(extra: Partial<CompileOptions> = {}): CompileOptions {
  return {
    prefix: P,
    floorPool: "par-1",
    originTemplate: "https://{pool}.origin.example.com",
    now: new Date("2026-11-29T15:00:00.000Z"),
    carried: null,
    ...extra,
  };
}

/** A small valid world: three pools, all healthy, DE and _default rules. */
export function world(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "pool/fra-1": { origin: "https://fra-1.example.net" },
    "pool/ams-1": { origin: "https://ams-1.example.net", region: "eu-west" },
    "pool/par-1": { origin: "https://par-1.example.net" },
    "health/fra-1": { status: "healthy", p90_ms: 120 },
    "health/ams-1": { status: "healthy" },
    "health/par-1": { status: "healthy" },
    "country/_default": { primary: "ams-1", fallbacks: ["par-1"] },
    "country/DE": { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
    epoch: "7",
    ...overrides,
  };
}
