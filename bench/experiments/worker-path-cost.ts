// What does each side's own code cost per request in workerd, without the network or the load
// generator? `tsx bench/experiments/worker-path-cost.ts [rounds] [n]`: the routing Worker (plain
// and signing) and the contract floor, each in its own isolate, run N times per call with `fetch`
// answering at once (bench/workers/path-cost.ts); the calls alternate sides and are timed from
// outside. Prints µs per request per side (median over rounds) and each side minus the floor.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { localPersistRoot } from "../../adapters/kv/kv-settings.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { bundleForWorkerd, compatibilityDate } from "../../testkit/worker.js";
import { Cleanup } from "../lib/cleanup.js";
import type { FixtureEntry } from "../lib/fixture.js";
import { percentile } from "../lib/stats.js";
import { seedLocalRoutes, workerBenchMap } from "../lib/worker-map.js";

const rounds = Number(process.argv[2] ?? 15);
const n = Number(process.argv[3] ?? 2000);
const SIDES = ["none", "hmac", "floor", "edge", "signed"] as const;
const ATTRS = { "cdn-host": "cdn-eu.example.com", tier: "gold", tokenizer: "de" };
const ORIGIN = "http://127.0.0.1:9";

const cleanup = new Cleanup();
try {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-path-cost-"));
  cleanup.add("persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const withAttrs = (e: FixtureEntry): FixtureEntry =>
    e.rel.startsWith("country/")
      ? { ...e, value: JSON.stringify({ ...JSON.parse(e.value), attrs: ATTRS }) }
      : e;
  await seedLocalRoutes(persistDir, "cost", workerBenchMap("/cost/", ORIGIN, withAttrs));
  const [script, date] = await Promise.all([
    bundleForWorkerd(fileURLToPath(new URL("../workers/path-cost.ts", import.meta.url))),
    compatibilityDate(),
  ]);
  const mf = newMiniflare({
    resourcePersistencePath: localPersistRoot(persistDir),
    cf: false,
    // One isolate per side, as in the bench: what one side holds (the map) weighs on no other.
    workers: SIDES.map((side) => ({
      name: side,
      modules: true,
      script,
      compatibilityDate: date,
      kvNamespaces: { ROUTING: "cost" },
      bindings: { ORIGIN },
      routes: [`${side}.cost/*`],
    })),
  });
  cleanup.add("workerd", () => mf.dispose());
  await mf.ready;
  const run = async (side: string, count: number): Promise<number> => {
    const t = performance.now();
    const res = await mf.dispatchFetch(`http://${side}.cost/?side=${side}&n=${count}`);
    const body = await res.text();
    if (body !== "200") throw new Error(`${side}: ${res.status} ${body}`);
    return ((performance.now() - t) * 1000) / count;
  };
  for (const side of SIDES) await run(side, n);
  const us = new Map<string, number[]>(SIDES.map((s) => [s, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? SIDES : [...SIDES].reverse();
    for (const side of order) us.get(side)?.push(await run(side, n));
  }
  const median = (xs: readonly number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const floor = median(us.get("floor") ?? []);
  for (const side of SIDES) {
    const m = median(us.get(side) ?? []);
    console.log(
      `${side.padEnd(7)} ${m.toFixed(1).padStart(6)} µs/req   over the floor ${(m - floor).toFixed(1).padStart(6)} µs`,
    );
  }
} finally {
  await cleanup.runAll();
}
