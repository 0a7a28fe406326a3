import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type CompiledMap, parseMap, serializeMap } from "../../core/index.js";
import { buildMap } from "../../testkit/map-builder.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { startOrigins } from "../../testkit/origins.js";
import { freePort } from "../../testkit/ports.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import type { Cleanup } from "../lib/cleanup.js";
import type { FixtureEntry } from "../lib/fixture.js";
import { type Stack, startStack } from "../lib/stack.js";
import { round } from "../lib/stats.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OBSERVE_TOKEN = "bench-slow-country-token";
const DEBUG_TOKEN = "bench-slow-country-debug";
/** BR's viewers: one segment request every 50 ms whatever the last one took (players pace). */
const REQUEST_EVERY_MS = 50;
/** What BR's viewers get from gru-1 once it turns slow (its health URL stays fast). */
const SLOW_MS = 4_000;
/** Fast viewers after the observer's first write, before gru-1 turns slow. */
const STEADY_MS = 65_000;

/** `observe.slow_country_to_shed_ms` and how it was measured. */
export interface SlowCountryShedResult {
  /** gru-1 turning slow for BR's viewers → KV `routes` carries BR's shed by viewers. */
  readonly slow_country_to_shed_ms: number;
  readonly goal_ms: number;
  readonly shed_share: number;
  readonly requests_per_s: number;
}

function fixture(originUrl: string): FixtureEntry[] {
  const v = (x: unknown) => JSON.stringify(x);
  return [
    {
      rel: "pool/gru-1",
      value: v({ origin: originUrl, slow_ms: { low: 800, high: 2000 }, viewers: true }),
    },
    { rel: "pool/mia-1", value: v({ origin: "https://mia-1.example.net" }) },
    { rel: "health/gru-1", value: v({ status: "healthy", p90_ms: 60 }) },
    { rel: "health/mia-1", value: v({ status: "healthy", p90_ms: 60 }) },
    { rel: "country/_default", value: v({ primary: "mia-1", fallbacks: [] }) },
    { rel: "country/BR", value: v({ primary: "gru-1", fallbacks: ["mia-1"] }) },
    { rel: "epoch", value: "1" },
  ];
}

async function routesNow(stack: Stack): Promise<CompiledMap | null> {
  const text = await stack.reader.get("routes");
  return text === null ? null : parseMap(text);
}

/**
 * The seeds' incident against the clock (docs/reference.md §12): the real pusher (local sink) and
 * `edgectl observe` with its default settings (10 s polls, 50 samples, 15 s lease), the Worker in
 * workerd with its aggregator at its default flush (10 s), BR's viewers paced at 20 requests/s on
 * gru-1 (`viewers: true`, watermarks 800/2000) answering in 20 ms; a minute after the observer
 * wrote BR's fast p90, gru-1 answers BR after 4 s (its checkers' p90 stays 60 ms). Time from that
 * moment until the map in KV sheds BR by viewers.
 */
export async function slowCountryToShed(o: {
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}): Promise<SlowCountryShedResult> {
  const origins = await startOrigins(["gru-1"]);
  o.cleanup.add("origin (slow country)", () => origins.close());
  let delay = 20;
  origins.get("gru-1").respond(() => ({ status: 200, body: "segment", delayMs: delay }));
  const stack = await startStack(o.cleanup, fixture(origins.get("gru-1").url));

  const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);
  const dir = mkdtempSync(join(tmpdir(), "edge-bench-slow-country-"));
  o.cleanup.add("slow country dir", () => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const mf = newMiniflare({
    modules: true,
    script,
    compatibilityDate: date,
    // The incident's edge, as in test/e2e/viewers-incident.test.ts: a 4 s answer is an answer
    // (the default ORIGIN_TIMEOUT_MS is 4 s, and a timeout carries no time to first byte).
    bindings: { OBSERVE_TOKEN, DEBUG_TOKEN, ORIGIN_TIMEOUT_MS: "10000", ORIGIN_HEDGE_MS: "10000" },
    kvNamespaces: { ROUTING: "routing" },
    durableObjects: { OBSERVATIONS: { className: "ObservationAggregator", useSQLite: true } },
    cf: false,
    host: "127.0.0.1",
    port,
    resourcePersistencePath: join(dir, "edge"),
  });
  o.cleanup.add("slow country workerd", () => mf.dispose());
  await mf.ready;
  const edgeMap = buildMap(
    {
      default: { chain: ["mia-1"], source: "country/_default" },
      countries: { BR: { chain: ["gru-1"], source: "country/BR" } },
    },
    { rev: 1, originOf: () => origins.get("gru-1").url },
  );
  await (await mf.getKVNamespace("ROUTING")).put("routes", serializeMap(edgeMap));

  const observer = spawn(
    process.execPath,
    [`${ROOT}bin/edgectl.js`, "observe", "--edge", `http://127.0.0.1:${port}`],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ETCD_ENDPOINTS: stack.etcd.endpoint,
        ROUTING_PREFIX: stack.prefix,
        OBSERVE_TOKEN,
      },
      stdio: "ignore",
    },
  );
  o.cleanup.add("observer (slow country)", async () => {
    if (observer.exitCode !== null || observer.signalCode !== null) return;
    const exited = new Promise((r) => observer.once("exit", r));
    observer.kill("SIGTERM");
    await exited;
  });

  let sent = 0;
  const pending = new Set<Promise<unknown>>();
  const pacer = setInterval(() => {
    sent++;
    // Over the listener (not dispatchFetch, whose own pool would queue them): each viewer
    // its own request, however long the last ones take.
    const p = fetch(`http://127.0.0.1:${port}/seg/${sent}.ts`, {
      headers: { "X-Edge-Debug-Token": DEBUG_TOKEN, "X-Edge-Debug-Country": "BR" },
    })
      .then((r) => r.text())
      .catch(() => undefined);
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }, REQUEST_EVERY_MS);
  o.cleanup.add("slow country viewers", async () => {
    clearInterval(pacer);
    await Promise.all(pending);
  });

  // Steady state: the observer has written BR's fast p90 (enough samples, a lease of its own).
  const observed = `${stack.prefix}observed/BR/gru-1`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const v = await stack.client.get(observed).string();
    if (v !== null && (JSON.parse(v) as { p90_ms: number }).p90_ms < 800) break;
    if (Date.now() > deadline) throw new Error("slow country: the observer never wrote BR's p90");
    await sleep(200);
  }
  // A full minute of fast viewers in the observer's two-minute window: the slow ones must
  // outweigh a steady market's history, not a few seconds of it.
  await sleep(STEADY_MS);
  const before = await routesNow(stack);
  if (before?.countries.BR?.shed) throw new Error("slow country: BR shed before the slowdown");

  const t0 = performance.now();
  delay = SLOW_MS;
  let m: CompiledMap | null = null;
  let seen = "";
  for (;;) {
    const v = await stack.client.get(observed).string();
    if (v !== seen && v !== null) {
      seen = v;
      o.log(
        `  +${((performance.now() - t0) / 1000).toFixed(1)} s observed ${v}; ${pending.size} in flight`,
      );
    }
    m = await routesNow(stack);
    if (m?.countries.BR?.shed?.some((s) => s.pool === "gru-1" && s.by === "viewers")) break;
    if (performance.now() - t0 > 300_000) throw new Error("slow country: BR never shed in KV");
    await sleep(100);
  }
  const took = performance.now() - t0;
  const share = m?.countries.BR?.shed?.[0]?.share ?? 0;
  o.log(`  slow country to shed: ${took.toFixed(0)} ms to BR's ${share} % shed by viewers in KV`);
  return {
    slow_country_to_shed_ms: round(took, 0),
    goal_ms: 60_000,
    shed_share: share,
    requests_per_s: 1000 / REQUEST_EVERY_MS,
  };
}
