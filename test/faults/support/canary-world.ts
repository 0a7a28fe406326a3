import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Canary, CanarySchema } from "../../../core/index.js";
import { type AuditRecord, AuditRecordSchema } from "../../../edgectl/audit/audit-record.js";
import type { EtcdCluster } from "../../../testkit/etcd-cluster.js";
import { type Origins, startOrigins } from "../../../testkit/origins.js";
import { type OwnedProcess, spawnOwned } from "../../../testkit/owned-process.js";
import { freePort } from "../../../testkit/ports.js";
import { type PusherProcess, ROOT } from "../../../testkit/pusher-process.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import type { FaultContext } from "../scenario.js";
import { type MemberClients, memberClients, scenarioCluster } from "./cluster-world.js";
import { names } from "./etcd-world.js";
import { type RecordedKv, startRecordedKv } from "./kv-recorder.js";
import { startScenarioPusher } from "./pusher-process.js";

const OBSERVE_TOKEN = "faults-canary-observe-7c1d";
const DEBUG_TOKEN = "faults-canary-debug-51ab";
/** How long the cold shard takes before its headers: the seeds' BR incident. */
export const SLOW_MS = 4_000;
/** The viewers of BR: distinct rendezvous keys, so the canary's hash draws about its share. */
export const CANARY_VIEWERS = Array.from(
  { length: 1000 },
  (_, i) => `198.51.${100 + (i >> 8)}.${i & 255}`,
);
/** BR's stable rule before any canary. */
export const BR_BEFORE = JSON.stringify({ primary: "fra-1", fallbacks: [] });
const POOLS = ["fra-1", "par-1", "gru-slow", "gru-2"] as const;

/** What each viewer got: the pools that answered and the sides it was told. */
export interface ViewerSeen {
  readonly pools: Set<string>;
  readonly sides: Set<string>;
}

/**
 * A 3-member etcd cluster with BR on fra-1; two real pushers (one leads) writing one recorded KV,
 * whose `routes` the Worker in workerd (with its aggregator) follows; BR's viewers on loopback
 * origins, `gru-slow` answering after 4 s; the real `edgectl observe` judging canaries.
 */
export interface CanaryWorld {
  readonly cluster: EtcdCluster;
  readonly mc: MemberClients;
  readonly prefix: string;
  readonly auditPrefix: string;
  /** edgectl's environment: every member, the prefixes, the operator. */
  readonly env: Record<string, string>;
  readonly origins: Origins;
  readonly kv: RecordedKv;
  readonly worker: TestWorker;
  /** The etcd revision once the seed was written: history is judged from here. */
  readonly startRev: number;
  /** Each viewer's pools and sides so far. */
  readonly seen: ReadonlyMap<string, ViewerSeen>;
  /** The two pushers now (a killed one is replaced by `restartPusher`). */
  pushers(): readonly PusherProcess[];
  /** Index of the pusher whose `/status` says leader, or null. */
  leader(): Promise<number | null>;
  /** kill -9 of pusher `i`. */
  killPusher(i: number): Promise<void>;
  /** Starts pusher `i` again under its id. */
  restartPusher(i: number): Promise<void>;
  observer(): OwnedProcess;
  /** `canary/current` now (through any live member), or null. */
  canaryNow(): Promise<Canary | null>;
  /** The audit records, oldest first, with their commit revisions. */
  records(): Promise<{ readonly rev: number; readonly record: AuditRecord }[]>;
}

export async function canaryWorld(ctx: FaultContext): Promise<CanaryWorld> {
  const cluster = await scenarioCluster(ctx);
  const mc = memberClients(ctx, cluster);
  const { prefix, electionKey } = names("canary");
  const auditPrefix = `${prefix.slice(0, -1)}-audit/`;
  const origins = await startOrigins(POOLS);
  ctx.defer(() => origins.close());
  origins.get("gru-slow").respond(() => ({ status: 200, body: "cold", delayMs: SLOW_MS }));

  const startRev = await mc.any(async (c) => {
    const put = (k: string, v: unknown) =>
      c.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));
    for (const pool of POOLS) {
      await put(`pool/${pool}`, { origin: origins.get(pool).url });
      await put(`health/${pool}`, { status: "healthy", p90_ms: 100 });
    }
    await put("country/_default", { primary: "fra-1", fallbacks: [] });
    await put("country/BR", BR_BEFORE);
    const res = await put("epoch", "10");
    return Number(res.header.revision);
  });

  const kv = await startRecordedKv(ctx);
  const endpoints = cluster.endpoints.join(",");
  const pushers: PusherProcess[] = [];
  const startPusher = async (i: number) => {
    const p = await startScenarioPusher(ctx, {
      id: `canary-${i + 1}`,
      etcdEndpoint: endpoints,
      prefix,
      electionKey,
      electionTtl: 3,
      kvEnv: kv.env(),
      extraEnv: { FLOOR_POOL: "par-1" },
    });
    await p.ready();
    pushers[i] = p;
  };
  await startPusher(0);
  await startPusher(1);

  const worker = await startWorker({
    DEBUG_TOKEN,
    OBSERVE_TOKEN,
    OBSERVE_FLUSH_SECONDS: "0",
    ORIGIN_TIMEOUT_MS: "10000",
  });
  ctx.defer(() => worker.dispose());
  ctx.transcript.secret("OBSERVE_TOKEN", OBSERVE_TOKEN);
  ctx.transcript.secret("DEBUG_TOKEN", DEBUG_TOKEN);
  const edgeUrl = (await worker.mf.ready).origin;

  // The Worker follows KV as Cloudflare's edge would: every new `routes` the pushers store.
  let following = true;
  const follow = (async () => {
    let last = "";
    while (following) {
      const text = kv.standin.values.get("routes");
      if (text && text !== last) {
        await worker.putMap(text, { settle: false }).catch(() => undefined);
        last = text;
      }
      await sleep(50);
    }
  })();
  ctx.defer(async () => {
    following = false;
    await follow;
  });
  await waitFor("BR routed at the edge", 30_000, async () => {
    const res = await worker.dispatch("/__edge/route", {
      country: "BR",
      headers: { "X-Edge-Debug-Token": DEBUG_TOKEN },
    });
    return res.status === 200 && res.json<{ route: { pool: string } }>().route.pool === "fra-1";
  });

  // BR's viewers, many at a time, for the whole scenario.
  const seen = new Map<string, ViewerSeen>();
  let viewing = true;
  let next = 0;
  const viewer = async () => {
    while (viewing) {
      const ip = CANARY_VIEWERS[next++ % CANARY_VIEWERS.length] ?? "";
      const res = await worker
        .dispatch(`/vod/seg-${next}.ts`, { country: "BR", headers: { "CF-Connecting-IP": ip } })
        .catch(() => null);
      if (!res) {
        await sleep(100);
        continue;
      }
      const s = seen.get(ip) ?? { pools: new Set<string>(), sides: new Set<string>() };
      s.pools.add(res.headers.get("x-edge-pool") ?? "none");
      s.sides.add(res.headers.get("x-edge-canary") ?? "none");
      seen.set(ip, s);
    }
  };
  const viewers = Promise.all(Array.from({ length: 24 }, viewer));
  ctx.defer(async () => {
    viewing = false;
    await viewers;
  });

  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    TMPDIR: process.env.TMPDIR ?? "/tmp",
    ETCD_ENDPOINTS: endpoints,
    ROUTING_PREFIX: prefix,
    AUDIT_PREFIX: auditPrefix,
    EDGECTL_USER: "sre",
    NO_COLOR: "1",
  };
  const statusPort = await freePort();
  const observer = spawnOwned(
    "observer",
    process.execPath,
    [
      join(ROOT, "bin/edgectl.js"),
      "observe",
      "--edge",
      edgeUrl,
      "--interval",
      "0.25",
      "--ttl",
      "3",
      "--listen",
      `127.0.0.1:${statusPort}`,
    ],
    {
      env: { ...env, OBSERVE_TOKEN, EDGECTL_USER: "observer" },
      cwd: ROOT,
      onOutput: (t) => ctx.transcript.add("observer", "log", t),
    },
  );
  ctx.defer(() => observer.stop(3_000));
  await waitFor("the observer's /status", 30_000, async () => {
    const res = await fetch(`http://127.0.0.1:${statusPort}/status`).catch(() => null);
    const doc = (await res?.json().catch(() => null)) as { status?: string } | null;
    return doc?.status === "ok";
  });

  return {
    cluster,
    mc,
    prefix,
    auditPrefix,
    env,
    origins,
    kv,
    worker,
    startRev,
    seen,
    pushers: () => pushers,
    async leader() {
      const docs = await Promise.all(pushers.map((p) => p.status().catch(() => null)));
      const i = docs.findIndex((d) => d?.role === "leader");
      return i < 0 ? null : i;
    },
    killPusher: async (i) => {
      await pushers[i]?.proc.kill9();
    },
    restartPusher: startPusher,
    observer: () => observer,
    async canaryNow() {
      const text = await mc.any(async (c) => c.get(`${prefix}canary/current`).string());
      return text === null ? null : CanarySchema.parse(JSON.parse(text));
    },
    async records() {
      const res = await mc.any((c) => c.getAll().prefix(auditPrefix).sort("Key", "Ascend").exec());
      return res.kvs.map((kv) => ({
        rev: Number(kv.mod_revision),
        record: AuditRecordSchema.parse(JSON.parse(kv.value.toString("utf8"))),
      }));
    },
  };
}

/** Polls `ok` every 200 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  timeoutMs: number,
  ok: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ok().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`never: ${what} (${timeoutMs / 1000} s)`);
    await sleep(200);
  }
}
