import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { prefixEnd } from "../../adapters/paged-range.js";
import type { PusherProcess } from "../../testkit/pusher-process.js";
import { Cleanup } from "../lib/cleanup.js";
import { deployedEnvironment, deployedNodeOptions } from "../lib/deployed-environment.js";
import { putOne } from "../lib/etcd-load.js";
import { firstPushFloorMs } from "../lib/first-push-floor.js";
import { growthFixture, growthRule } from "../lib/fixture.js";
import { pollUntil } from "../lib/poll-until.js";
import { rssMb } from "../lib/proc.js";
import { startStack } from "../lib/stack.js";
import { round, summarize } from "../lib/stats.js";

/** The prefix sizes measured, each on its own etcd and pusher. */
export const GROWTH_SIZES = [1_000, 10_000, 100_000] as const;

/** One prefix size, measured on the built pusher (cloudflare sink → the KV stand-in). */
export interface GrowthSize {
  readonly keys: number;
  readonly pools: number;
  /** Spawning the pusher → KV holds the fixture's revision (start, election, read, compile, write). */
  readonly first_push_ms: number;
  /**
   * Floor, same etcd and stand-in: the least a pusher can do from its start to KV holding a
   * value of the map's size (bench/lib/first-push-floor-child.ts: Node once, etcd3, the same
   * paged read with every value through JSON.parse, one write), p50 of 3.
   */
  readonly first_push_floor_ms: number;
  /** After a quiet 1.1 s, one country change: put → KV `routes` carries its revision; p50 and max. */
  readonly put_to_kv_p50_ms: number;
  readonly put_to_kv_max_ms: number;
  /**
   * What an operator sees: after a quiet 1.1 s, one country change until the pusher's
   * `/status` shows `routes_revision` at its revision, `/status` polled every 5 ms and parsed
   * (as `curl | jq` in a loop would); p50 and max over as many changes again, each its own.
   * The polls cost the pusher: each answer serializes every pool's report (`status_bytes`).
   */
  readonly put_to_status_p50_ms: number;
  readonly put_to_status_max_ms: number;
  /** `/status` at rest: its size and one GET's time (p50 of 5), ms. */
  readonly status_bytes: number;
  readonly status_get_ms: number;
  /** The pusher's RSS after its first push, and after the changes. */
  readonly rss_mb_first_push: number;
  readonly rss_mb: number;
  /** The pusher's own read of the prefix (a delta read) and its compile, per change (from /metrics). */
  readonly range_read_ms: number;
  readonly compile_ms: number;
  /**
   * The floor of that read: the same filtered range request (whole prefix, `min_mod_revision`
   * at the change) sent by the bench's own client right after each change, p50. etcd 3.4 walks
   * and loads every key under the prefix to filter it, whoever asks.
   */
  readonly etcd_range_read_ms: number;
  /** Range reads the pusher made per change (the economy: 1 for a lone change). */
  readonly reads_per_change: number;
  /** Bytes of `routes` in KV. */
  readonly map_bytes: number;
  /** How long etcd took the fixture (128-put transactions, 16 in flight). */
  readonly load_ms: number;
  readonly changes: number;
}

/** A size that could not be measured, and why. */
export interface GrowthFailure {
  readonly keys: number;
  readonly error: string;
}

/** `growth` in results.json. */
export interface GrowthResult {
  readonly sizes: Record<string, GrowthSize | GrowthFailure>;
  /**
   * 100k figure ÷ 10k figure, for each cost; 10 (the ratio of keys) is linear. `worst` names the
   * figure that grew most.
   */
  readonly ratio_100k_10k: {
    readonly first_push_ms: number;
    readonly range_read_ms: number;
    readonly compile_ms: number;
    readonly put_to_kv_p50_ms: number;
    readonly rss_mb: number;
    /** The read's floor, for comparison (not one of the pusher's costs, so never `worst`). */
    readonly etcd_range_read_ms: number;
    readonly worst: string;
  } | null;
  readonly node_options: string | null;
  readonly duration_s: number;
}

/** Changes measured per size. */
export interface GrowthOptions {
  readonly changes: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
  /** Default {@link GROWTH_SIZES}. */
  readonly sizes?: readonly number[];
}

/** Sum and count of one histogram, to diff two scrapes. */
function histogram(samples: ReadonlyMap<string, number>, name: string): [number, number] {
  return [samples.get(`${name}_sum`) ?? Number.NaN, samples.get(`${name}_count`) ?? Number.NaN];
}

/** One filtered range over the prefix, as the pusher's delta read sends it; its duration, ms. */
async function timedDeltaRange(client: Etcd3, prefix: string, since: number): Promise<number> {
  const key = Buffer.from(prefix);
  const t0 = performance.now();
  await client.kv.range({ key, range_end: prefixEnd(key), min_mod_revision: since, limit: 1000 });
  return performance.now() - t0;
}

/** Polls the pusher's `/status` until `routes_revision` reaches `rev`; ms waited, or null. */
async function waitStatusRoutes(
  pusher: PusherProcess,
  rev: number,
  timeoutMs: number,
): Promise<number | null> {
  const t0 = performance.now();
  const seen = await pollUntil(
    async () => {
      const s = await pusher.status();
      return s && s.routes_revision !== null && s.routes_revision >= rev ? s.routes_revision : null;
    },
    { timeoutMs, intervalMs: 5 },
  );
  return seen === null ? null : performance.now() - t0;
}

/** `/status` at rest: bytes of one answer and the p50 of 5 GETs, ms. */
async function statusCost(port: number): Promise<{ bytes: number; ms: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    bytes = (await (await fetch(`http://127.0.0.1:${port}/status`)).text()).length;
    times.push(performance.now() - t0);
  }
  return { bytes, ms: summarize(times).p50 };
}

async function measure(keys: number, o: GrowthOptions): Promise<GrowthSize> {
  const own = new Cleanup();
  const drop = o.cleanup.add(`growth ${keys}`, () => own.runAll());
  try {
    const fixture = growthFixture(keys);
    const pools = fixture.filter((e) => e.rel.startsWith("pool/")).length;
    const stack = await startStack(own, fixture, {
      sink: "cloudflare",
      deployed: deployedEnvironment(),
      firstPushTimeoutMs: 90_000,
    });
    const { pusher, client, prefix } = stack;
    await sleep(1_000);
    const rssFirst = rssMb(pusher.pid);
    const routesBytes = (await stack.reader.get("routes"))?.length ?? 0;
    const floors: number[] = [];
    for (let i = 0; i < 3; i++)
      floors.push(await firstPushFloorMs(stack, routesBytes, own, deployedEnvironment()));
    // Each change must route DE differently from the last, or `routes` is not rewritten.
    let lastRule = "";
    const nextRule = (i: number, shift: number): string => {
      let rule = growthRule(i, pools, shift);
      for (let s = shift + 1; rule === lastRule; s++) rule = growthRule(i, pools, s);
      lastRule = rule;
      return rule;
    };
    const putToKv: number[] = [];
    const putToStatus: number[] = [];
    const reads: number[] = [];
    const compiles: number[] = [];
    const floorReads: number[] = [];
    let readCount = 0;
    for (let i = 0; i < o.changes; i++) {
      // The scrape first: at 50,000 pools it costs the pusher ~1 s of CPU and its garbage, which
      // must not fall in the timed change. Then a lone change after a quiet write slot: what an
      // operator's `edgectl boost` meets.
      const before = await pusher.metricSamples();
      await sleep(1_100);
      const t0 = performance.now();
      const rev = await putOne(client, `${prefix}country/DE`, nextRule(i, i + 1));
      const waited = await stack.waitKvRevision(rev, 30_000, 5);
      if (waited === null) {
        const exit = pusher.proc.child.exitCode ?? pusher.proc.child.signalCode;
        const said = pusher.warnings.slice(-3).map((w) => w.msg);
        // A crash (a V8 heap limit, an abort) says why on stderr, not in a log line.
        const tail = exit === null ? "" : `\n${pusher.proc.output().slice(-1_500)}`;
        throw new Error(
          `change ${i} (revision ${rev}) never reached KV; pusher ${exit === null ? "running" : `exited (${exit})`}${said.length ? `, last warnings: ${said.join(" | ")}` : ""}${tail}`,
        );
      }
      putToKv.push(performance.now() - t0);
      await sleep(50);
      const after = await pusher.metricSamples();
      const [rs0, rc0] = histogram(before, "edge_pusher_range_read_seconds");
      const [rs1, rc1] = histogram(after, "edge_pusher_range_read_seconds");
      const [cs0, cc0] = histogram(before, "edge_pusher_compile_seconds");
      const [cs1, cc1] = histogram(after, "edge_pusher_compile_seconds");
      if (rc1 > rc0) reads.push(((rs1 - rs0) / (rc1 - rc0)) * 1000);
      if (cc1 > cc0) compiles.push(((cs1 - cs0) / (cc1 - cc0)) * 1000);
      readCount += rc1 - rc0;
      floorReads.push(await timedDeltaRange(client, prefix, rev));
    }
    await sleep(1_000);
    const map = await stack.reader.get("routes");
    const rssEnd = rssMb(pusher.pid);
    // The same changes as an operator sees them, after the figures above: polling /status costs
    // the pusher (CPU and garbage), so it shares no change, and no RSS reading, with them.
    const status = await statusCost(pusher.port);
    for (let i = 0; i < o.changes; i++) {
      await sleep(1_100);
      const t0 = performance.now();
      const rev = await putOne(client, `${prefix}country/DE`, nextRule(i, 1_000_000 + i));
      if ((await waitStatusRoutes(pusher, rev, 30_000)) === null)
        throw new Error(`change ${i} (revision ${rev}) never showed in /status.routes_revision`);
      putToStatus.push(performance.now() - t0);
    }
    const p = summarize(putToKv);
    const ps = summarize(putToStatus);
    const result: GrowthSize = {
      keys,
      pools,
      first_push_ms: round(stack.firstPushMs),
      first_push_floor_ms: round(summarize(floors).p50),
      put_to_kv_p50_ms: round(p.p50),
      put_to_kv_max_ms: round(p.max),
      put_to_status_p50_ms: round(ps.p50),
      put_to_status_max_ms: round(ps.max),
      status_bytes: status.bytes,
      status_get_ms: round(status.ms),
      rss_mb_first_push: round(rssFirst),
      rss_mb: round(rssEnd),
      range_read_ms: reads.length ? round(summarize(reads).p50) : Number.NaN,
      compile_ms: compiles.length ? round(summarize(compiles).p50) : Number.NaN,
      etcd_range_read_ms: round(summarize(floorReads).p50),
      reads_per_change: round(readCount / o.changes),
      map_bytes: map?.length ?? 0,
      load_ms: round(stack.loadMs),
      changes: o.changes,
    };
    o.log(
      `  ${keys} keys: first push ${result.first_push_ms} ms (floor ${result.first_push_floor_ms}), put→KV p50 ${result.put_to_kv_p50_ms} ms, put→/status p50 ${result.put_to_status_p50_ms} ms (/status ${result.status_bytes} B, ${result.status_get_ms} ms), read ${result.range_read_ms} ms (etcd's own ${result.etcd_range_read_ms}), compile ${result.compile_ms} ms, RSS ${result.rss_mb_first_push} → ${result.rss_mb} MiB, map ${result.map_bytes} B (etcd load ${result.load_ms} ms)`,
    );
    return result;
  } finally {
    await drop();
  }
}

function ratios(small: GrowthSize, big: GrowthSize): NonNullable<GrowthResult["ratio_100k_10k"]> {
  const r = (k: "first_push_ms" | "range_read_ms" | "compile_ms" | "put_to_kv_p50_ms" | "rss_mb") =>
    round(big[k] / small[k]);
  const each = {
    first_push_ms: r("first_push_ms"),
    range_read_ms: r("range_read_ms"),
    compile_ms: r("compile_ms"),
    put_to_kv_p50_ms: r("put_to_kv_p50_ms"),
    rss_mb: r("rss_mb"),
  };
  const worst = Object.entries(each).reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  return {
    ...each,
    etcd_range_read_ms: round(big.etcd_range_read_ms / small.etcd_range_read_ms),
    worst,
  };
}

/**
 * 1k, 10k and 100k keys under the prefix (252 country rules, the rest pools with health keys),
 * each on a fresh etcd and a fresh built pusher: first push, lone-change propagation, the
 * pusher's own read and compile times, its RSS and the map's size.
 */
export async function growth(o: GrowthOptions): Promise<GrowthResult> {
  const started = Date.now();
  const sizes: Record<string, GrowthSize | GrowthFailure> = {};
  for (const keys of o.sizes ?? GROWTH_SIZES) {
    try {
      sizes[String(keys)] = await measure(keys, o);
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      o.log(`  ${keys} keys: FAILED: ${error}`);
      sizes[String(keys)] = { keys, error };
    }
  }
  const small = sizes["10000"];
  const big = sizes["100000"];
  return {
    sizes,
    ratio_100k_10k:
      small && big && !("error" in small) && !("error" in big) ? ratios(small, big) : null,
    node_options: deployedNodeOptions(),
    duration_s: Math.round((Date.now() - started) / 1000),
  };
}
