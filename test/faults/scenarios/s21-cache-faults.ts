import { fileURLToPath } from "node:url";
import { serializeMap } from "../../../core/index.js";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { buildMap } from "../../../testkit/map-builder.js";
import { startOrigins } from "../../../testkit/origins.js";
import { startWorker } from "../../../testkit/worker.js";
import { Invariants, type Scenario } from "../scenario.js";

/** The deployed Worker over a location cache that errors, answers in 3 s or hangs, by path. */
const ENTRY = fileURLToPath(new URL("../../../bench/workers/faulty-cache.ts", import.meta.url));
const FAULTS = ["error", "slow", "hang", "fine"] as const;
const POOLS = ["fra-1", "ams-1"] as const;

export const cacheFaults: Scenario = {
  id: 21,
  title: "the edge cache errors, answers slowly or hangs",
  invariant:
    "with the location's cache throwing, answering in 3 s or never answering (per path), under concurrent viewers and a dead primary origin: every request is served 200 with its own bytes from an origin or the working cache, none fails or is served another URL's copy, and the working cache still makes one origin fetch per segment (docs/caching.md)",
  budgetMs: (q) => (q ? 90_000 : 240_000),
  async run(ctx) {
    const total = ctx.quick ? 400 : 2_000;
    const loops = 8;
    const inv = new Invariants();
    const r = seededRandom(ctx.seed);
    const origins = await startOrigins([...POOLS]);
    ctx.defer(() => origins.close());
    for (const o of origins.all) {
      o.respond((req) => ({
        status: 200,
        headers: { "cache-control": "max-age=600" },
        body: `segment ${req.url}`,
        delayMs: Math.floor(r() * 5),
      }));
    }
    const worker = await startWorker(
      { ORIGIN_TIMEOUT_MS: "1000", MAX_ATTEMPTS: "2" },
      { entry: ENTRY, observations: false },
    );
    ctx.defer(() => worker.dispose());
    const map = (rev: number, first: string) =>
      serializeMap(
        buildMap(
          {
            default: {
              chain: [first, ...POOLS.filter((p) => p !== first)],
              source: "country/_default",
            },
          },
          { rev, originOf: (p) => origins.get(p).url },
        ),
      );
    await worker.putMap(map(1, "fra-1"));
    // The route's first origin is dead throughout: every origin fetch is a failover to ams-1.
    await origins.get("fra-1").kill();
    const segments = 20;
    const fineHits = new Map<string, number>();
    let served = 0;
    let cached = 0;
    let next = 0;
    const one = async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const fault = FAULTS[Math.floor(r() * FAULTS.length)] ?? "fine";
        const path = `/${fault}/seg-${Math.floor(r() * segments)}.ts`;
        let res: Awaited<ReturnType<typeof worker.dispatch>>;
        try {
          res = await worker.dispatch(path);
        } catch (e) {
          inv.check(false, "request failed", () => `${path}: ${String(e)}`);
          continue;
        }
        served += 1;
        const status = res.headers.get("x-edge-cache");
        inv.check(res.status === 200, "not 200", () => `${path}: ${res.status}`);
        inv.check(
          res.body === `segment ${path}`,
          "wrong bytes",
          () => `${path}: ${res.body.slice(0, 60)}`,
        );
        inv.check(
          status === "HIT" || status === "MISS",
          "X-Edge-Cache not HIT or MISS",
          () => `${path}: ${status}`,
        );
        if (status === "HIT") cached += 1;
        inv.check(
          fault === "fine" || status !== "HIT",
          "a HIT from a failing cache",
          () => `${path}: ${status}`,
        );
      }
    };
    await Promise.all(Array.from({ length: loops }, one));
    for (const o of origins.all)
      for (const q of o.requests)
        if (q.url.startsWith("/fine/")) fineHits.set(q.url, (fineHits.get(q.url) ?? 0) + 1);
    // A copy is stored once the first viewer's body is read; viewers collapsed behind it read it.
    for (const [url, n] of fineHits)
      inv.check(n === 1, "a working-cache segment fetched twice", () => `${url}: ${n} fetches`);
    return {
      runs: total,
      figure: `${served} of ${total} served, ${cached} from the working cache, ${fineHits.size} /fine/ segments fetched once each`,
      failures: inv.failures(),
    };
  },
};
