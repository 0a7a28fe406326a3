import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type CompiledMap, compile, serializeMap } from "../../core/index.js";
import { seededRandom } from "../../testkit/kv-standin.js";
import { type OriginServer, startOrigins } from "../../testkit/origins.js";
import { startWorker } from "../../testkit/worker.js";
import type { Cleanup } from "../lib/cleanup.js";
import type { FixtureEntry } from "../lib/fixture.js";
import { type Stack, startStack } from "../lib/stack.js";
import { round } from "../lib/stats.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SLOW = { low: 800, high: 2000 } as const;
const TOKEN = "bench-slow-pools-token";

/** `health.shed_share_error` and how it was measured. */
export interface ShedShareResult {
  /** |measured − compiled| in percentage points; the goal is ≤ 3. */
  readonly shed_share_error: number;
  readonly compiled_share: number;
  readonly measured_share: number;
  readonly viewers: number;
}

/**
 * The map the pusher compiles for a pool whose checkers say p90 1400 ms with watermarks 800/2000
 * (a 50 % shed), served by the Worker in workerd: the share of 1,000 viewers of DE it sends away
 * from fra-1, against the compiled share.
 */
export async function shedShareError(o: {
  readonly viewers: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}): Promise<ShedShareResult> {
  const prefix = "/bench/shed/";
  const entries: [string, unknown][] = [
    ["pool/fra-1", { origin: "https://fra-1.example.net", slow_ms: SLOW }],
    ["pool/ams-1", { origin: "https://ams-1.example.net" }],
    ["pool/par-1", { origin: "https://par-1.example.net" }],
    ["health/fra-1/a", { status: "healthy", p90_ms: 1400, samples: 20 }],
    ["health/fra-1/b", { status: "healthy", p90_ms: 1390, samples: 20 }],
    ["health/fra-1/c", { status: "healthy", p90_ms: 1410, samples: 20 }],
    ["health/ams-1", { status: "healthy" }],
    ["health/par-1", { status: "healthy" }],
    ["country/_default", { primary: "ams-1", fallbacks: ["par-1"] }],
    ["country/DE", { primary: "fra-1", fallbacks: ["ams-1", "par-1"] }],
  ];
  const { map } = compile(
    {
      revision: 1,
      entries: entries.map(([k, v]) => ({ key: `${prefix}${k}`, value: JSON.stringify(v) })),
    },
    {
      carried: null,
      prefix,
      floorPool: "par-1",
      originTemplate: "https://{pool}.example.net",
      now: new Date(),
    },
  );
  const compiled = map.countries.DE?.shed?.find((s) => s.pool === "fra-1")?.share ?? 0;
  const worker = await startWorker({ DEBUG_TOKEN: TOKEN });
  o.cleanup.add("workerd (shed share)", () => worker.dispose());
  await worker.putMap(serializeMap(map));
  let away = 0;
  for (let i = 0; i < o.viewers; i++) {
    const res = await worker.dispatch("/__edge/route", {
      country: "DE",
      headers: { "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Viewer": `viewer-${i}` },
    });
    if ((res.json() as { route: { pool: string } }).route.pool !== "fra-1") away += 1;
  }
  const measured = (away * 100) / o.viewers;
  o.log(`  shed share: compiled ${compiled} %, measured ${measured.toFixed(1)} % of ${o.viewers}`);
  return {
    shed_share_error: round(Math.abs(measured - compiled), 1),
    compiled_share: compiled,
    measured_share: round(measured, 1),
    viewers: o.viewers,
  };
}

function fixture(): FixtureEntry[] {
  const v = (x: unknown) => JSON.stringify(x);
  return [
    { rel: "pool/fra-1", value: v({ origin: "https://fra-1.example.net", slow_ms: SLOW }) },
    { rel: "pool/ams-1", value: v({ origin: "https://ams-1.example.net" }) },
    { rel: "pool/par-1", value: v({ origin: "https://par-1.example.net" }) },
    { rel: "health/ams-1", value: v({ status: "healthy" }) },
    { rel: "health/par-1", value: v({ status: "healthy" }) },
    { rel: "country/_default", value: v({ primary: "ams-1", fallbacks: ["par-1"] }) },
    { rel: "country/DE", value: v({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] }) },
    { rel: "epoch", value: "1" },
  ];
}

/** Starts the built `edgectl heartbeat fra-1 --checker NAME` against the stack's etcd. */
function startChecker(
  stack: Stack,
  cleanup: Cleanup,
  name: string,
  checkUrl: string,
  intervalS: number,
): void {
  const child = spawn(
    process.execPath,
    [
      `${ROOT}bin/edgectl.js`,
      "heartbeat",
      "fra-1",
      "--checker",
      name,
      "--interval",
      String(intervalS),
      "--check-timeout",
      "3",
      "--check-url",
      checkUrl,
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ETCD_ENDPOINTS: stack.etcd.endpoint,
        ROUTING_PREFIX: stack.prefix,
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  cleanup.add(`checker ${name} ${child.pid}`, async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
  });
}

async function routesNow(stack: Stack): Promise<CompiledMap | null> {
  const text = await stack.reader.get("routes");
  return text === null ? null : (JSON.parse(text) as CompiledMap);
}

async function until(stack: Stack, what: string, ok: (m: CompiledMap) => boolean, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = await routesNow(stack);
    if (m && ok(m)) return m;
    if (Date.now() > deadline) throw new Error(`slow pools: KV never showed ${what}`);
    await sleep(50);
  }
}

/** `health.kv_writes_per_hour_noisy` and how it was measured. */
export interface NoisyWritesResult {
  /** KV `routes` writes per hour; the goal is ≤ 60. */
  readonly kv_writes_per_hour_noisy: number;
  readonly routes_writes: number;
  readonly seconds: number;
  readonly interval_s: number;
  readonly shed_changes: number;
}

/**
 * The real pusher (local sink) and a real checker at the default 5 s interval, whose check URL
 * reports a p90 that jumps to a random point within ±20 % of the low watermark (800 ms) before
 * every probe, with the default `SHED_RECOVER_SECONDS` (60): KV `routes` writes over `seconds`,
 * scaled to an hour.
 */
export async function noisyWrites(o: {
  readonly seconds: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}): Promise<NoisyWritesResult> {
  const intervalS = 5;
  const r = seededRandom(22);
  const origins = await startOrigins(["fra-1"]);
  o.cleanup.add("origin (noisy)", () => origins.close());
  origins.get("fra-1").respond(() => ({
    status: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ p90_ms: Math.round(SLOW.low * (0.8 + 0.4 * r())) }),
  }));
  const stack = await startStack(o.cleanup, fixture());
  startChecker(stack, o.cleanup, "noisy", `${origins.get("fra-1").url}/healthz`, intervalS);
  await until(stack, "fra-1 on DE", (m) => m.countries.DE?.pool === "fra-1", 30_000);
  await sleep(2_000);
  const since = Date.now();
  const shares: number[] = [];
  while (Date.now() - since < o.seconds * 1000) {
    const m = await routesNow(stack);
    const share = m?.sheds?.["fra-1"]?.share ?? 0;
    if (shares.at(-1) !== share) shares.push(share);
    await sleep(200);
  }
  const writes = stack.pusher.routesWrites(since).length;
  o.log(`  noisy p90: ${writes} routes writes in ${o.seconds} s; shares ${shares.join(">")}`);
  return {
    kv_writes_per_hour_noisy: round((writes * 3600) / o.seconds, 0),
    routes_writes: writes,
    seconds: o.seconds,
    interval_s: intervalS,
    shed_changes: Math.max(0, shares.length - 1),
  };
}

/** `health.slow_to_shed_ms` and how it was measured. */
export interface SlowToShedResult {
  /** Latency at 1.4 s → KV `routes` carries fra-1's 50 % shed; goal ≤ 2 intervals + 2 s. */
  readonly slow_to_shed_ms: number;
  readonly interval_s: number;
  readonly goal_ms: number;
  readonly shed_share: number;
  /** Fast probes in the checker's window when the origin slowed down (the full run fills it: `LATENCY_WINDOW`). */
  readonly fast_samples_before: number;
}

/**
 * A real checker at the 5 s interval measures a loopback origin answering after 300 ms for
 * `fastSamples` probes (20: a full window), then the origin slows to 1,400 ms (watermarks 800/2000: a 50 % shed): time from
 * that moment until the map in KV carries the shed (what a Worker isolate reads on its next
 * refresh; `ISOLATE_CACHE_SECONDS` and KV's own cache come on top at the edge).
 */
export async function slowToShed(o: {
  /** Fast probes before the slowdown: 20 fills the window (100 s); fewer makes the p90 turn sooner. */
  readonly fastSamples: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}): Promise<SlowToShedResult> {
  const intervalS = 5;
  const origins = await startOrigins(["fra-1"]);
  o.cleanup.add("origin (slow to shed)", () => origins.close());
  const origin: OriginServer = origins.get("fra-1");
  let delay = 300;
  origin.respond(() => ({ status: 200, delayMs: delay }));
  const stack = await startStack(o.cleanup, fixture());
  startChecker(stack, o.cleanup, "ttfb", `${origin.url}/healthz`, intervalS);
  await until(stack, "fra-1 on DE", (m) => m.countries.DE?.pool === "fra-1", 30_000);
  // the registration's probe, then one every interval
  await sleep((o.fastSamples - 1) * intervalS * 1000 + 1000);
  const t0 = performance.now();
  delay = 1_400;
  const m = await until(
    stack,
    "fra-1 shedding",
    (x) => (x.sheds?.["fra-1"]?.share ?? 0) >= 40,
    120_000,
  );
  const took = performance.now() - t0;
  const share = m.sheds?.["fra-1"]?.share ?? 0;
  o.log(`  slow to shed: ${took.toFixed(0)} ms to a ${share} % shed in KV`);
  return {
    slow_to_shed_ms: round(took, 0),
    interval_s: intervalS,
    goal_ms: 2 * intervalS * 1000 + 2000,
    shed_share: share,
    fast_samples_before: o.fastSamples,
  };
}
