import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { COUNTRY_CODES, type CompiledMap } from "../../core/index.js";
import { type OwnedProcess, spawnOwned } from "../../testkit/owned-process.js";
import { Cleanup } from "../lib/cleanup.js";
import type { FixtureEntry } from "../lib/fixture.js";
import { pollUntil } from "../lib/poll-until.js";
import { type Stack, startStack } from "../lib/stack.js";
import { round, summarize } from "../lib/stats.js";
import { type BlackholeFailoverResult, blackholeFailover } from "./failover-blackhole.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** `failover_ms` in results.json. */
export interface FailoverResult {
  readonly ttl_s: number;
  readonly p50: number;
  readonly max: number;
  readonly min: number;
  readonly runs: number;
  /** p50 minus the TTL: what etcd's expiry check and the pusher add. */
  readonly over_ttl_p50: number;
  /**
   * The floor each run meets: kill → the pool's health key deleted (etcd revoking the expired
   * lease, seen by the bench's own watch), p50 and max. etcd looks for expired leases every
   * 500 ms, so this alone spans TTL − renewal interval … TTL + 0.5 s.
   */
  readonly revoke_p50: number;
  readonly revoke_max: number;
  /** Per run, failover minus that revoke: the pusher's part (watch, read, compile, KV put), max. */
  readonly after_revoke_max: number;
  /** Request-time failover from a pool that accepts and never answers. */
  readonly blackhole: BlackholeFailoverResult;
  /** The Worker's `ORIGIN_TIMEOUT_MS` during `blackhole`. */
  readonly origin_timeout_ms: number;
}

/** `ORIGIN_TIMEOUT_MS` for the blackhole runs: short, so that runs stay quick. */
const BENCH_ORIGIN_TIMEOUT_MS = 1_000;

/** Run count and lease TTL. */
export interface FailoverOptions {
  readonly runs: number;
  readonly ttlSeconds: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const POOLS = ["hb-a", "hb-b"] as const;
const PER_POOL = 20;

function fixture(): { entries: FixtureEntry[]; groups: Map<string, string[]> } {
  const entries: FixtureEntry[] = [];
  const groups = new Map<string, string[]>();
  for (const p of [...POOLS, "backup"]) {
    entries.push({
      rel: `pool/${p}`,
      value: JSON.stringify({ origin: `https://${p}.example.net` }),
    });
  }
  entries.push({ rel: "health/backup", value: JSON.stringify({ status: "healthy" }) });
  const codes = [...COUNTRY_CODES];
  POOLS.forEach((pool, k) => {
    const ccs = codes.slice(k * PER_POOL, (k + 1) * PER_POOL);
    groups.set(pool, ccs);
    for (const cc of ccs) {
      entries.push({
        rel: `country/${cc}`,
        value: JSON.stringify({ primary: pool, fallbacks: ["backup"] }),
      });
    }
  });
  entries.push({
    rel: "country/_default",
    value: JSON.stringify({ primary: "backup", fallbacks: [] }),
  });
  entries.push({ rel: "epoch", value: "1" });
  return { entries, groups };
}

async function routesMap(stack: Stack): Promise<CompiledMap | null> {
  const text = await stack.reader.get("routes");
  return text === null ? null : (JSON.parse(text) as CompiledMap);
}

function servedBy(map: CompiledMap | null, ccs: readonly string[], pool: string): number {
  if (!map) return 0;
  return ccs.filter((cc) => map.countries[cc]?.pool === pool).length;
}

/**
 * A pool's heartbeat (`edgectl heartbeat POOL --ttl 2`) is SIGKILLed: no revoke, the lease must
 * expire. Measured: kill → KV `routes` sends none of that pool's countries to it. Two pools
 * alternate so the next heartbeat warms up while the current failover is measured.
 */
export async function failover(o: FailoverOptions): Promise<FailoverResult> {
  const own = new Cleanup();
  let blackhole: BlackholeFailoverResult;
  try {
    blackhole = await blackholeFailover({
      runs: o.runs,
      originTimeoutMs: BENCH_ORIGIN_TIMEOUT_MS,
      cleanup: own,
      log: o.log,
    });
  } finally {
    await own.runAll();
  }
  const { entries, groups } = fixture();
  const stack = await startStack(o.cleanup, entries);
  const beats = new Map<string, OwnedProcess>();
  // When each pool's health key was last deleted, as a plain watch sees it.
  const deletedAt = new Map<string, number>();
  const health = `${stack.prefix}health/`;
  const watcher = await stack.client.watch().prefix(health).create();
  o.cleanup.add("failover health watcher", () => watcher.cancel());
  watcher.on("delete", (kv) => {
    const pool = kv.key.toString("utf8").slice(health.length).split("/")[0] ?? "";
    if (!deletedAt.has(pool)) deletedAt.set(pool, performance.now());
  });

  const startBeat = (pool: string): OwnedProcess => {
    const beat = spawnOwned(
      `heartbeat ${pool}`,
      process.execPath,
      [`${ROOT}bin/edgectl.js`, "heartbeat", pool, "--ttl", String(o.ttlSeconds)],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          ETCD_ENDPOINTS: stack.etcd.endpoint,
          ROUTING_PREFIX: stack.prefix,
        },
        outputLimit: 16 * 1024,
      },
    );
    o.cleanup.add(`heartbeat ${pool} ${beat.pid}`, () => beat.kill9());
    beats.set(pool, beat);
    return beat;
  };
  const untilServed = async (pool: string) => {
    const ccs = groups.get(pool) ?? [];
    const ok = await pollUntil(
      async () => (servedBy(await routesMap(stack), ccs, pool) === ccs.length ? true : null),
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    if (!ok) throw new Error(`${pool} never took its countries (heartbeat not registered?)`);
  };

  startBeat(POOLS[0]);
  startBeat(POOLS[1]);
  const times: number[] = [];
  const revokes: number[] = [];
  const afterRevoke: number[] = [];
  for (let i = 0; i < o.runs; i++) {
    const pool = POOLS[i % 2] ?? "hb-a";
    const ccs = groups.get(pool) ?? [];
    await untilServed(pool);
    // A few renewals under the belt, so the lease is in its steady state when it dies.
    await sleep(1_000);
    const beat = beats.get(pool);
    if (!beat) throw new Error("no heartbeat");
    deletedAt.delete(pool);
    const t0 = performance.now();
    const exited = beat.kill9();
    const gone = await pollUntil(
      async () => (servedBy(await routesMap(stack), ccs, pool) === 0 ? performance.now() : null),
      { timeoutMs: 30_000, intervalMs: 5 },
    );
    await exited;
    if (gone === null) throw new Error(`${pool}'s countries never failed over`);
    times.push(gone - t0);
    // The watch event may trail the pusher's by a moment: waited for, briefly.
    const deleted = await pollUntil(async () => deletedAt.get(pool) ?? null, {
      timeoutMs: 2_000,
      intervalMs: 5,
    });
    if (deleted !== null) {
      revokes.push(deleted - t0);
      afterRevoke.push(gone - deleted);
    }
    o.log(
      `  run ${i + 1}/${o.runs}: ${pool} failed over in ${(gone - t0).toFixed(0)} ms (health key deleted after ${deleted === null ? "?" : (deleted - t0).toFixed(0)} ms)`,
    );
    startBeat(pool);
  }
  const s = summarize(times);
  return {
    ttl_s: o.ttlSeconds,
    p50: round(s.p50),
    max: round(s.max),
    min: round(s.min),
    runs: s.n,
    over_ttl_p50: round(s.p50 - o.ttlSeconds * 1000),
    revoke_p50: round(summarize(revokes).p50),
    revoke_max: round(summarize(revokes).max),
    after_revoke_max: round(summarize(afterRevoke).max),
    blackhole,
    origin_timeout_ms: BENCH_ORIGIN_TIMEOUT_MS,
  };
}
