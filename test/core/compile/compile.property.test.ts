import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  compile,
  decodeSnapshot,
  parseMap,
  type Route,
  type Snapshot,
  serializeMap,
} from "../../../core/index.js";
import { opts, P } from "../../helpers/snapshot.js";

const pools = ["fra-1", "ams-1", "par-1", "lon-1", "nyc-1", "sin-1", "Bad_Pool", ""];
const ccs = ["DE", "FR", "US", "_default", "ZZ", "de", "T1", "XX", "BR"];

const poolName = fc.constantFrom(...pools);
const garbage = fc.oneof(
  fc.string(),
  fc.constant("{"),
  fc.constant("null"),
  fc.constant("[]"),
  fc.uint8Array({ maxLength: 16 }),
  fc.jsonValue().map((v) => JSON.stringify(v)),
);
const rule = fc.record({
  primary: poolName,
  fallbacks: fc.array(poolName, { maxLength: 12 }),
});
const value = (good: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 4, arbitrary: good.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: garbage },
  );

const entry = fc.oneof(
  fc.tuple(
    fc.constantFrom(...ccs).map((c) => `country/${c}`),
    value(rule),
  ),
  fc.tuple(
    fc.constantFrom(...ccs).map((c) => `override/${c}`),
    value(rule.map((r) => ({ ...r, reason: "x" }))),
  ),
  fc.tuple(
    poolName.map((p) => `pool/${p}`),
    value(
      fc.record({ origin: fc.constantFrom("https://a.example", "http://127.0.0.1:1", "ftp://x") }),
    ),
  ),
  fc.tuple(
    poolName.map((p) => `health/${p}`),
    value(
      fc.record({ status: fc.constantFrom("healthy", "healthy", "draining", "unhealthy", "up") }),
    ),
  ),
  fc.tuple(fc.constantFrom("epoch", "junk", "lock/apply", "country/"), garbage),
);

const snapshot: fc.Arbitrary<Snapshot> = fc
  .tuple(fc.array(entry, { maxLength: 40 }), fc.nat({ max: 1_000_000 }))
  .map(([entries, revision]) => ({
    revision,
    entries: entries.map(([k, v]) => ({ key: `${P}${k}`, value: v as string | Uint8Array })),
  }));

function checkRoute(route: Route, healthy: Set<string>, floor: string) {
  expect(route.chain.length).toBeGreaterThan(0);
  expect(route.chain.length).toBeLessThanOrEqual(9);
  expect(route.pool).toBe(route.chain[0]?.pool);
  if (route.source === "floor") {
    expect(route.pool).toBe(floor);
    expect(route.degraded).not.toBeNull();
  } else {
    for (const link of route.chain) expect(healthy.has(link.pool)).toBe(true);
    expect(new Set(route.chain.map((c) => c.pool)).size).toBe(route.chain.length);
  }
}

describe("compile (property)", () => {
  it("never throws, always has a default, and only emits healthy pools or the floor", () => {
    fc.assert(
      fc.property(snapshot, snapshot, (first, second) => {
        let previous: CompiledMap | null = null;
        for (const s of [first, second]) {
          const { map } = compile(s, opts({ carried: previous }));
          const state = decodeSnapshot(s, P);
          const healthy = new Set(
            [...state.health].filter(([, h]) => h.status === "healthy").map(([p]) => p),
          );
          expect(map.default).toBeDefined();
          checkRoute(map.default, healthy, "par-1");
          for (const route of Object.values(map.countries)) checkRoute(route, healthy, "par-1");
          expect(parseMap(serializeMap(map))).not.toBeNull();
          previous = map;
        }
      }),
      { numRuns: 400 },
    );
  });
});
