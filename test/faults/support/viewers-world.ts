import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { type CompiledMap, compile, serializeMap } from "../../../core/index.js";
import { buildMap } from "../../../testkit/map-builder.js";
import { newMiniflare } from "../../../testkit/miniflare.js";
import { type Origins, startOrigins } from "../../../testkit/origins.js";
import { type OwnedProcess, spawnOwned } from "../../../testkit/owned-process.js";
import { freePort } from "../../../testkit/ports.js";
import { type PusherProcess, ROOT } from "../../../testkit/pusher-process.js";
import { bundleWorker, compatibilityDate } from "../../../testkit/worker.js";
import type { FaultContext } from "../scenario.js";
import { type EdgeRelay, startEdgeRelay } from "./edge-relay.js";
import { names, scenarioEtcd, testClient } from "./etcd-world.js";
import { type RecordedKv, startRecordedKv } from "./kv-recorder.js";
import { startScenarioPusher } from "./pusher-process.js";

/** The observer's token at the edge; the relay's `wrong-token` mode sends another. */
const OBSERVE_TOKEN = "faults-observe-token-7e21";
const SLOW_MS = { low: 100, high: 200 };
/** How long fra-1 takes to answer DE's viewers (its health URL: at once). */
const DE_VIEWER_MS = 400;
/** The observer's poll interval (s); its poll timeout is the same. */
export const OBSERVER_INTERVAL_S = 0.5;
/** The observer's lease TTL (s). */
export const OBSERVER_TTL_S = 3;

/** The observer's `/status`, or null when it does not answer. */
export interface ObserverStatusView {
  readonly status: string;
  readonly reason: string | null;
  readonly registered: boolean;
  readonly released: boolean;
  readonly observed_keys: number;
}

/** What `edgectl top DE` said: its exit code and its first line of error, or its rows. */
export interface TopView {
  readonly code: number;
  readonly said: string;
}

/**
 * One etcd and pusher (recorded KV) whose DE viewers of fra-1 (`viewers: true`) are slow while
 * fra-1's checkers say fast; the Worker and its aggregator in workerd carrying DE's viewers to a
 * loopback origin; `edgectl observe` reaching the edge through a relay that can fail it.
 */
export interface ViewersWorld {
  readonly client: Etcd3;
  readonly prefix: string;
  readonly kv: RecordedKv;
  readonly pusher: PusherProcess;
  readonly relay: EdgeRelay;
  /** The running observer (a new one after `restartObserver`). */
  observer(): OwnedProcess;
  startObserver(): Promise<void>;
  observerStatus(): Promise<ObserverStatusView | null>;
  /** `edgectl top DE --edge RELAY`: what the operator sees. */
  top(): Promise<TopView>;
  /** The map etcd compiles to without any `observed/` key: the checkers' routing alone. */
  checkersMap(): Promise<CompiledMap>;
  /** The `observed/` keys under the prefix now. */
  observedKeys(): Promise<string[]>;
  waitMap(what: string, ok: (m: CompiledMap) => boolean, timeoutMs: number): Promise<CompiledMap>;
}

/** The routing of a map (every country's route and the default), as one comparable text. */
export function routingOf(m: CompiledMap): string {
  return JSON.stringify({ default: m.default, countries: m.countries });
}

/** DE's share of fra-1 shed by viewers in `m` (0 when none). */
export function deShed(m: CompiledMap): number {
  const s = m.countries.DE?.shed?.find((x) => x.pool === "fra-1" && x.by === "viewers");
  return s?.share ?? 0;
}

export async function viewersWorld(ctx: FaultContext): Promise<ViewersWorld> {
  const etcd = await scenarioEtcd(ctx);
  const client = testClient(ctx, etcd.endpoint);
  const { prefix, electionKey } = names("viewers");
  const put = (rel: string, v: unknown) => client.put(`${prefix}${rel}`).value(JSON.stringify(v));
  await Promise.all([
    put("pool/fra-1", { origin: "https://fra-1.example.net", slow_ms: SLOW_MS, viewers: true }),
    put("pool/ams-1", { origin: "https://ams-1.example.net" }),
    put("pool/par-1", { origin: "https://par-1.example.net" }),
    put("health/fra-1", { status: "healthy", p90_ms: 20 }),
    put("health/ams-1", { status: "healthy", p90_ms: 20 }),
    put("health/par-1", { status: "healthy", p90_ms: 20 }),
    put("country/_default", { primary: "ams-1", fallbacks: ["par-1"] }),
    put("country/DE", { primary: "fra-1", fallbacks: ["ams-1"] }),
    put("country/FR", { primary: "fra-1", fallbacks: ["ams-1"] }),
  ]);
  await client.put(`${prefix}epoch`).value("1");
  const kv = await startRecordedKv(ctx);
  const pusher = await startScenarioPusher(ctx, {
    id: "viewers-1",
    etcdEndpoint: etcd.endpoint,
    prefix,
    electionKey,
    kvEnv: kv.env(),
    extraEnv: { SHED_RECOVER_SECONDS: "1" },
  });
  await pusher.ready();

  // The edge: the Worker with its aggregator, and the same Worker without one.
  const origins: Origins = await startOrigins(["fra-1"]);
  ctx.defer(() => origins.close());
  origins.get("fra-1").respond(() => ({ status: 200, body: "segment", delayMs: DE_VIEWER_MS }));
  const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);
  const dir = mkdtempSync(join(tmpdir(), "faults-viewers-"));
  ctx.defer(() => rmSync(dir, { recursive: true, force: true }));
  const edge = async (aggregator: boolean) => {
    const port = await freePort();
    const mf = newMiniflare({
      modules: true,
      script,
      compatibilityDate: date,
      bindings: { OBSERVE_TOKEN, OBSERVE_FLUSH_SECONDS: "0", ISOLATE_CACHE_SECONDS: "0" },
      kvNamespaces: { ROUTING: "routing" },
      ...(aggregator
        ? {
            durableObjects: {
              OBSERVATIONS: { className: "ObservationAggregator", useSQLite: true },
            },
          }
        : {}),
      cf: false,
      host: "127.0.0.1",
      port,
      resourcePersistencePath: join(dir, aggregator ? "edge" : "bare"),
    });
    ctx.defer(() => mf.dispose());
    await mf.ready;
    const routes = buildMap(
      {
        default: { chain: ["fra-1"], source: "country/_default" },
        countries: { DE: { chain: ["fra-1"], source: "country/DE" } },
      },
      { rev: 1, originOf: () => origins.get("fra-1").url },
    );
    await (await mf.getKVNamespace("ROUTING")).put("routes", serializeMap(routes));
    return { mf, url: `http://127.0.0.1:${port}` };
  };
  const main = await edge(true);
  const bare = await edge(false);
  const relay = await startEdgeRelay(main.url, bare.url, {
    slowMs: OBSERVER_INTERVAL_S * 1000 * 4,
    wrongToken: "faults-observe-token-rotated",
  });
  ctx.defer(() => relay.close());
  ctx.transcript.secret("OBSERVE_TOKEN", OBSERVE_TOKEN);

  // DE's viewers, a few at a time, for the whole scenario.
  let stopped = false;
  const viewer = async () => {
    for (let i = 0; !stopped; i++) {
      const res = await main.mf
        .dispatchFetch(`http://edge.test/seg/${i}.ts`, { cf: { country: "DE" } as never })
        .catch(() => null);
      await res?.text();
      if (!res) await sleep(100);
    }
  };
  const viewers = Promise.all(Array.from({ length: 4 }, viewer));
  ctx.defer(async () => {
    stopped = true;
    await viewers;
  });

  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    ETCD_ENDPOINTS: etcd.endpoint,
    ROUTING_PREFIX: prefix,
    OBSERVE_TOKEN,
    NO_COLOR: "1",
  };
  let observer: OwnedProcess | null = null;
  let statusPort = 0;
  const startObserver = async () => {
    statusPort = await freePort();
    const p = spawnOwned(
      "observer",
      process.execPath,
      [
        join(ROOT, "bin/edgectl.js"),
        "observe",
        "--edge",
        relay.url,
        "--interval",
        String(OBSERVER_INTERVAL_S),
        "--min-samples",
        "5",
        "--ttl",
        String(OBSERVER_TTL_S),
        "--listen",
        `127.0.0.1:${statusPort}`,
      ],
      { env, cwd: ROOT, onOutput: (t) => ctx.transcript.add("observer", "log", t) },
    );
    ctx.defer(() => p.stop(3_000));
    observer = p;
  };
  await startObserver();

  return {
    client,
    prefix,
    kv,
    pusher,
    relay,
    observer: () => {
      if (!observer) throw new Error("no observer");
      return observer;
    },
    startObserver,
    async observerStatus() {
      const res = await fetch(`http://127.0.0.1:${statusPort}/status`, {
        signal: AbortSignal.timeout(2_000),
      }).catch(() => null);
      if (!res) return null;
      const text = await res.text();
      ctx.transcript.add("observer", "status", text);
      return JSON.parse(text) as ObserverStatusView;
    },
    top: () =>
      new Promise<TopView>((done) => {
        execFile(
          process.execPath,
          [join(ROOT, "bin/edgectl.js"), "top", "DE", "--edge", relay.url],
          { env, cwd: ROOT, timeout: 30_000 },
          (err, stdout, stderr) => {
            ctx.transcript.add("edgectl top", "log", `${stdout}${stderr}`);
            const code = err ? (typeof err.code === "number" ? err.code : 99) : 0;
            const why =
              err && code === 99 ? `no exit code (${err.signal ?? err.code ?? "?"}) ` : "";
            const said = `${why}${(code === 0 ? stdout.split("\n")[2] : stderr.split("\n")[0]) ?? ""}`;
            done({ code, said: said.replace(/\s+/g, " ").trim() });
          },
        );
      }),
    async checkersMap() {
      const res = await client.getAll().prefix(prefix).exec();
      const entries = res.kvs
        .map((x) => ({ key: x.key.toString("utf8"), value: x.value }))
        .filter((e) => !e.key.startsWith(`${prefix}observed/`));
      return compile(
        { revision: Number(res.header.revision), entries },
        {
          carried: null,
          prefix,
          floorPool: "par-1",
          originTemplate: "https://{pool}.origin.example.com",
          now: new Date(),
        },
      ).map;
    },
    async observedKeys() {
      return (await client.getAll().prefix(`${prefix}observed/`).keys()).map((k) =>
        k.slice(prefix.length),
      );
    },
    async waitMap(what, ok, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = kv.routes();
        if (m && ok(m)) return m;
        if (Date.now() > deadline) throw new Error(`the map in KV never showed ${what}`);
        await sleep(100);
      }
    },
  };
}
