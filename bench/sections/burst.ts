import { setTimeout as sleep } from "node:timers/promises";
import { COUNTRY_CODES } from "../../core/index.js";
import type { Cleanup } from "../lib/cleanup.js";
import { countryRule, scaleFixture } from "../lib/fixture.js";
import { startStack } from "../lib/stack.js";
import { maxInWindow, round } from "../lib/stats.js";

/** `burst` in results.json. */
export interface BurstResult {
  /** First put → KV `routes` at the final revision. */
  readonly settle_ms: number;
  /** Last put acknowledged → KV at the final revision. */
  readonly after_last_put_ms: number;
  /** How long etcd took to accept all the puts. */
  readonly puts_ms: number;
  readonly changes: number;
  /** `routes` writes made for the burst. */
  readonly kv_writes: number;
  readonly max_writes_per_s_per_key: number;
  readonly meta_max_writes_per_s: number;
}

/** Burst size. */
export interface BurstOptions {
  readonly changes: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const CONCURRENCY = 32;

/** `changes` rule changes as fast as etcd takes them; then until KV holds the final state. */
export async function burst(o: BurstOptions): Promise<BurstResult> {
  const pools = 20;
  const stack = await startStack(o.cleanup, scaleFixture({ keys: 0, pools }));
  const { client, prefix } = stack;
  const countries = [...COUNTRY_CODES];
  await sleep(1_500);

  const startedWall = Date.now();
  const t0 = performance.now();
  let next = 0;
  let lastRev = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= o.changes) return;
      const cc = countries[i % countries.length] ?? "DE";
      const res = await client
        .put(`${prefix}country/${cc}`)
        .value(countryRule(i, pools, 1 + Math.floor(i / countries.length)))
        .exec();
      lastRev = Math.max(lastRev, Number(res.header.revision));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const putsDone = performance.now();
  const waited = await stack.waitKvRevision(lastRev, 60_000, 2);
  if (waited === null) throw new Error("KV never reached the burst's final revision");
  const settled = performance.now();
  // Let any trailing coalesced write land before counting.
  await sleep(2_500);
  const writes = stack.pusher.routesWrites(startedWall - 5);
  const metaWrites = stack.pusher.pushes.filter(
    (p) => p.keys.includes("meta") && p.startedAt >= startedWall - 5,
  );
  o.log(
    `  ${o.changes} puts in ${(putsDone - t0).toFixed(0)} ms; KV final after ${(settled - t0).toFixed(0)} ms; ${writes.length} routes writes`,
  );
  return {
    settle_ms: round(settled - t0),
    after_last_put_ms: round(settled - putsDone),
    puts_ms: round(putsDone - t0),
    changes: o.changes,
    kv_writes: writes.length,
    max_writes_per_s_per_key: maxInWindow(writes.map((w) => w.startedAt)),
    meta_max_writes_per_s: maxInWindow(metaWrites.map((w) => w.startedAt)),
  };
}
