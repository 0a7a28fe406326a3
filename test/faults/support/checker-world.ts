import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import type { CompiledMap } from "../../../core/index.js";
import { type OwnedProcess, spawnOwned } from "../../../testkit/owned-process.js";
import { type PusherProcess, ROOT } from "../../../testkit/pusher-process.js";
import type { FaultContext } from "../scenario.js";
import { names, scenarioEtcd, testClient } from "./etcd-world.js";
import { type RecordedKv, startRecordedKv } from "./kv-recorder.js";
import { startScenarioPusher } from "./pusher-process.js";

/** The countries the checked pool serves first (fallback `ams-1`). */
export const CHECKED_COUNTRIES = ["DE", "FR", "NL"] as const;

/** One etcd, one pusher on a recorded KV, and a pool `fra-1` judged by real checkers. */
export interface CheckerWorld {
  readonly client: Etcd3;
  readonly prefix: string;
  readonly endpoint: string;
  readonly kv: RecordedKv;
  readonly pusher: PusherProcess;
  /** Starts `edgectl heartbeat fra-1 --checker NAME --check-url URL ARGS…` (the built bin). */
  checker(name: string, checkUrl: string, args?: readonly string[]): OwnedProcess;
  /** The checker's key (`health/fra-1/NAME`) as it is now, or null. */
  checkerValue(name: string): Promise<{ status?: string; p90_ms?: number; version: number } | null>;
  /** Waits until `n` checker keys of fra-1 sit on leases. */
  waitCheckers(n: number, timeoutMs?: number): Promise<void>;
  /** Waits until the map in KV satisfies `ok`. */
  waitMap(what: string, ok: (m: CompiledMap) => boolean, timeoutMs?: number): Promise<CompiledMap>;
}

/**
 * Seeds `pool/fra-1` (with `poolExtra`, e.g. `slow_ms`), `ams-1` and `par-1` (plain, lease-less
 * `health/` keys), DE, FR and NL on fra-1 then ams-1, and starts the pusher (`pusherEnv` added).
 */
export async function checkerWorld(
  ctx: FaultContext,
  tag: string,
  poolExtra: Record<string, unknown>,
  pusherEnv: Record<string, string> = {},
): Promise<CheckerWorld> {
  const etcd = await scenarioEtcd(ctx);
  const client = testClient(ctx, etcd.endpoint);
  const { prefix, electionKey } = names(tag);
  const put = (rel: string, v: unknown) =>
    client.put(`${prefix}${rel}`).value(typeof v === "string" ? v : JSON.stringify(v));
  await Promise.all([
    put("pool/fra-1", { origin: "https://fra-1.example.net", ...poolExtra }),
    put("pool/ams-1", { origin: "https://ams-1.example.net" }),
    put("pool/par-1", { origin: "https://par-1.example.net" }),
    put("health/ams-1", { status: "healthy" }),
    put("health/par-1", { status: "healthy" }),
    put("country/_default", { primary: "ams-1", fallbacks: ["par-1"] }),
    ...CHECKED_COUNTRIES.map((cc) =>
      put(`country/${cc}`, { primary: "fra-1", fallbacks: ["ams-1"] }),
    ),
    put("epoch", "1"),
  ]);
  const kv = await startRecordedKv(ctx);
  const pusher = await startScenarioPusher(ctx, {
    id: `${tag}-1`,
    etcdEndpoint: etcd.endpoint,
    prefix,
    electionKey,
    kvEnv: kv.env(),
    extraEnv: pusherEnv,
  });
  await pusher.ready();
  const key = (name: string) => `${prefix}health/fra-1/${name}`;
  return {
    client,
    prefix,
    endpoint: etcd.endpoint,
    kv,
    pusher,
    checker(name, checkUrl, args = []) {
      const p = spawnOwned(
        `checker ${name}`,
        process.execPath,
        [
          join(ROOT, "bin/edgectl.js"),
          "heartbeat",
          "fra-1",
          "--checker",
          name,
          "--check-url",
          checkUrl,
          ...args,
        ],
        {
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            TMPDIR: process.env.TMPDIR,
            ETCD_ENDPOINTS: etcd.endpoint,
            ROUTING_PREFIX: prefix,
          },
          cwd: ROOT,
          onOutput: (t) => ctx.transcript.add(`checker ${name}`, "log", t),
        },
      );
      ctx.defer(() => p.stop(3_000));
      return p;
    },
    async checkerValue(name) {
      const kvs = (await client.get(key(name)).exec()).kvs[0];
      if (!kvs) return null;
      return {
        ...(JSON.parse(kvs.value.toString()) as { status?: string; p90_ms?: number }),
        version: Number(kvs.version),
      };
    },
    async waitCheckers(n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await client.getAll().prefix(`${prefix}health/fra-1/`).exec();
        if (res.kvs.filter((x) => x.lease !== "0").length >= n) return;
        if (Date.now() > deadline) throw new Error(`${n} checkers of fra-1 did not register`);
        await sleep(200);
      }
    },
    async waitMap(what, ok, timeoutMs = 30_000) {
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

/** The routes of the checked countries as one comparable text (pool, chain, weights, shed). */
export function checkedRoutes(m: CompiledMap): string {
  return JSON.stringify(
    CHECKED_COUNTRIES.map((cc) => {
      const r = m.countries[cc];
      return r
        ? {
            pool: r.pool,
            chain: r.chain.map((l) => l.pool),
            w: r.weights ?? null,
            s: r.shed ?? null,
          }
        : null;
    }),
  );
}
