import { Agent, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type CompiledMap, serializeMap, shedRoute } from "../../core/index.js";
import { buildMap, type MapSpec } from "../../testkit/map-builder.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { bundleForWorkerd, bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import type { Cleanup } from "../lib/cleanup.js";
import { SEGMENT_BYTES, type SegmentOrigin, startSegmentOrigin } from "../lib/segment-origin.js";
import { medianWithCi, round, summarize } from "../lib/stats.js";
import { bundlePassthrough, edgeWorker, passWorker } from "../lib/workerd.js";

/** What the edge-cache section measured (`cache` in results.json). */
export interface EdgeCacheResult {
  /** Segments each phase requests. */
  readonly segments: number;
  /**
   * Origin fetches for segments already cached, after a boost, a shed step, a weighted split
   * and a failover (origin killed) moved the viewers to other pools (goal: 0).
   */
  readonly origin_fetches_after_move: number;
  /** Origin fetches warming the cache (one per segment). */
  readonly origin_fetches_warm: number;
  /** Median over pairs of a HIT's time to first byte ÷ the pass-through Worker's; its 95 % interval. */
  readonly hit_ttfb_ratio: number;
  readonly hit_ttfb_ratio_ci95: readonly [number, number];
  /** p50 time to first byte, ms: a HIT, and the pass-through Worker fetching the same bytes. */
  readonly hit_ttfb_p50_ms: number;
  readonly pass_ttfb_p50_ms: number;
  /**
   * The floor of a HIT in this workerd: a Worker that only answers `caches.default.match`
   * (bench/workers/cache-floor.ts). `hit_over_cache_floor`: median over triples of HIT ÷ it,
   * what the edge cache adds to the Cache API's own time.
   */
  readonly cache_floor_ttfb_p50_ms: number;
  readonly hit_over_cache_floor: number;
  readonly cache_floor_over_pass: number;
  readonly pairs: number;
  readonly segment_bytes: number;
}

/** Options of {@link edgeCache}. */
export interface EdgeCacheOptions {
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
  /** Segments per phase. */
  readonly segments: number;
  /** HIT / pass-through request pairs timed. */
  readonly pairs: number;
}

const CACHE_HOST = "cache.bench";
const PASS_HOST = "pass.bench";
const FLOOR_HOST = "cache-floor.bench";
const FLOOR_ENTRY = fileURLToPath(new URL("../workers/cache-floor.ts", import.meta.url));
const POOLS = ["a-1", "b-1", "c-1"] as const;
const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/** A GET with a Host header over kept-alive connections: status, `X-Edge-Cache`, time to first byte. */
function ttfbGet(
  url: string,
  host: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ status: number; cache: string | null; pool: string | null; ttfbMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { headers: { ...headers, host }, agent }, (res) => {
      let first = Number.NaN;
      res.once("data", () => {
        first = performance.now() - started;
      });
      res.resume();
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          cache: (res.headers["x-edge-cache"] as string | undefined) ?? null,
          pool: (res.headers["x-edge-pool"] as string | undefined) ?? null,
          ttfbMs: first,
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * The edge cache against moves and against a pass-through Worker: three counting origins (the
 * same segments), the routing Worker in workerd routing every viewer by the default route.
 * Phase 1 warms `segments` segments on a-1; then a boost (b-1 first), a shed step (a-1 slow,
 * half its viewers handed to b-1, docs/reference.md §9), a weighted split over the three with a
 * viewer per request, and a failover (a-1 killed, the map still naming it first)
 * request the same segments, and every origin's count must stay put. Then a HIT against the
 * pass-through Worker fetching the same bytes from b-1, and against the cache floor (the Cache
 * API alone), in rotating triples.
 */
export async function edgeCache(o: EdgeCacheOptions): Promise<EdgeCacheResult> {
  const origins: Record<string, SegmentOrigin> = {};
  for (const p of POOLS) origins[p] = await startSegmentOrigin(o.cleanup, `origin ${p}`);
  const originOf = (p: string) => origins[p]?.url ?? "http://127.0.0.1:1";
  const [edgeScript, passScript, floorScript, date] = await Promise.all([
    bundleWorker(),
    bundlePassthrough(),
    bundleForWorkerd(FLOOR_ENTRY),
    compatibilityDate(),
  ]);
  const mf = newMiniflare({
    host: "127.0.0.1",
    port: 0,
    cf: false,
    workers: [
      {
        ...edgeWorker(edgeScript, date, CACHE_HOST),
        kvNamespaces: { ROUTING: "bench-cache" },
        // A map is re-read at most once a second, as in production (5 s by default), not on every request.
        bindings: { ISOLATE_CACHE_SECONDS: "1", MAX_ATTEMPTS: "3" },
      },
      passWorker(passScript, date, PASS_HOST, originOf("b-1")),
      passWorker(floorScript, date, FLOOR_HOST, originOf("b-1"), "cache-floor"),
    ],
  });
  o.cleanup.add("cache workerd", () => mf.dispose());
  const base = (await mf.ready).origin;
  const kv = await mf.getKVNamespace("ROUTING", "edge");
  let rev = 0;
  const putMap = async (spec: MapSpec, edit: (m: CompiledMap) => CompiledMap = (m) => m) => {
    rev += 1;
    await kv.put("routes", serializeMap(edit(buildMap(spec, { rev, originOf }))));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await fetch(`${base}/__edge/health`, { headers: { host: CACHE_HOST } });
      const body = (await res.json()) as { rev: number | null };
      if (body.rev === rev) return;
      if (Date.now() > deadline) throw new Error(`the Worker did not take map rev ${rev}`);
      await sleep(5);
    }
  };
  const total = async () => {
    let n = 0;
    for (const p of POOLS) if (p !== "a-1" || !killed) n += await origins[p]!.count();
    return n + aBeforeKill;
  };
  let killed = false;
  let aBeforeKill = 0;
  const paths = Array.from({ length: o.segments }, (_, i) => `/live/seg-${i}.ts`);
  const viewAll = async (viewer: (i: number) => Record<string, string> = () => ({})) => {
    const pools = new Set<string>();
    for (const [i, p] of paths.entries()) {
      const r = await ttfbGet(`${base}${p}`, CACHE_HOST, viewer(i));
      if (r.status !== 200) throw new Error(`${p}: ${r.status}`);
      pools.add(r.pool ?? "");
    }
    return pools;
  };

  await putMap({ default: { chain: ["a-1", "b-1", "c-1"], source: "country/_default" } });
  await viewAll();
  const warm = await total();
  o.log(`  cache: ${warm} origin fetches warming ${paths.length} segments`);
  await putMap({ default: { chain: ["b-1", "c-1"], source: "override/_default" } });
  await viewAll();
  await putMap({ default: { chain: ["a-1", "b-1", "c-1"], source: "country/_default" } }, (m) => ({
    ...m,
    default: shedRoute(m.default, new Map([["a-1", 50]])),
  }));
  const shedTo = await viewAll((i) => ({ "cf-connecting-ip": `203.0.113.${(i % 250) + 1}` }));
  // A shed that moved no viewer would prove nothing about the cache.
  if (!shedTo.has("b-1")) throw new Error(`the shed step moved no viewer to b-1: ${[...shedTo]}`);
  await putMap({ default: { chain: ["a-1", "b-1", "c-1"], source: "country/_default" } }, (m) => ({
    ...m,
    default: {
      ...m.default,
      weights: POOLS.map((pool) => ({ pool, weight: pool === "a-1" ? 34 : 33 })),
    },
  }));
  await viewAll((i) => ({ "cf-connecting-ip": `198.51.100.${(i % 250) + 1}` }));
  aBeforeKill = await origins["a-1"]!.count();
  origins["a-1"]!.kill();
  killed = true;
  await putMap({ default: { chain: ["a-1", "b-1"], source: "country/_default" } });
  await viewAll();
  const afterMove = (await total()) - warm;
  o.log(`  cache: ${afterMove} origin fetches after boost, shed, split and failover`);

  const hit: number[] = [];
  const pass: number[] = [];
  const floor: number[] = [];
  const ratios: number[] = [];
  const overFloor: number[] = [];
  const floorOverPass: number[] = [];
  const seg = paths[0] ?? "/live/seg-0.ts";
  for (let i = 0; i < 20; i++) {
    await ttfbGet(`${base}${seg}`, CACHE_HOST);
    await ttfbGet(`${base}${seg}`, PASS_HOST);
    await ttfbGet(`${base}${seg}`, FLOOR_HOST);
  }
  for (let i = 0; i < o.pairs; i++) {
    // Rotate which goes first, so none always has the warmer connection.
    const hosts = [CACHE_HOST, PASS_HOST, FLOOR_HOST];
    const order = [...hosts.slice(i % 3), ...hosts.slice(0, i % 3)];
    const got: Record<string, number> = {};
    for (const host of order) {
      const r = await ttfbGet(`${base}${seg}`, host);
      if (host === CACHE_HOST && r.cache !== "HIT")
        throw new Error(`expected a HIT, got ${r.cache}`);
      got[host] = r.ttfbMs;
    }
    const h = got[CACHE_HOST] ?? Number.NaN;
    const p = got[PASS_HOST] ?? Number.NaN;
    const f = got[FLOOR_HOST] ?? Number.NaN;
    hit.push(h);
    pass.push(p);
    floor.push(f);
    ratios.push(h / p);
    overFloor.push(h / f);
    floorOverPass.push(f / p);
  }
  const paired = medianWithCi(ratios);
  return {
    segments: paths.length,
    origin_fetches_after_move: afterMove,
    origin_fetches_warm: warm,
    hit_ttfb_ratio: round(paired.p50, 3),
    hit_ttfb_ratio_ci95: [round(paired.ci95[0], 3), round(paired.ci95[1], 3)],
    hit_ttfb_p50_ms: round(summarize(hit).p50, 3),
    pass_ttfb_p50_ms: round(summarize(pass).p50, 3),
    cache_floor_ttfb_p50_ms: round(summarize(floor).p50, 3),
    hit_over_cache_floor: round(medianWithCi(overFloor).p50, 3),
    cache_floor_over_pass: round(medianWithCi(floorOverPass).p50, 3),
    pairs: o.pairs,
    segment_bytes: SEGMENT_BYTES,
  };
}
