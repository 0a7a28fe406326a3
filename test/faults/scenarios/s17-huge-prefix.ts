import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { readPrefix } from "../../../adapters/prefix-read.js";
import { type CompiledMap, compile } from "../../../core/index.js";
import { createEtcdClient } from "../../../pusher/etcd-client.js";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { describeMismatch, waitConverged } from "../../../testkit/map-oracle.js";
import { COUNTRIES } from "../../../testkit/sample-countries.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { names, POOLS, scenarioEtcd, seedWorld } from "../support/etcd-world.js";
import { kvTimeline } from "../support/kv-latency.js";
import { startRecordedKv } from "../support/kv-recorder.js";
import { startScenarioPusher } from "../support/pusher-process.js";

const JUNK_KEYS = 100_000;
const HUGE_BYTES = 1_400_000;
/** etcd's default --max-txn-ops. */
const TXN_OPS = 128;
const REACH_MS = 2_000;
/** Inside a burst a change may also wait for the write slot (1 s) its predecessor took. */
const BURST_REACH_MS = REACH_MS + 1_000;

/** Loads `n` small junk keys in transactions of 128 puts, 16 in flight. */
async function loadJunk(client: Etcd3, prefix: string, n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        const from = next;
        next = Math.min(n, next + TXN_OPS);
        const success = [];
        for (let i = from; i < next; i++) {
          const key = `${prefix}junk/${String(i).padStart(6, "0")}`;
          success.push({
            request_put: { key: Buffer.from(key), value: Buffer.from(`{"n":${i}}`) },
          });
        }
        await client.kv.txn({ compare: [], success, failure: [] });
      }
    }),
  );
}

/** The oracle: etcd's prefix read (paged, with the project's receive limit) compiled. */
async function expectedMap(client: Etcd3, prefix: string): Promise<CompiledMap> {
  return compile(await readPrefix(client, prefix), {
    carried: null,
    prefix,
    floorPool: "par-1",
    originTemplate: "https://{pool}.origin.example.com",
    now: new Date(),
  }).map;
}

export const hugePrefix: Scenario = {
  id: 17,
  title: "Huge prefix: 1.4 MB values and 100,000 keys",
  invariant: `three health/ values of 1.4 MB and ${JUNK_KEYS.toLocaleString("en")} junk keys under the prefix: each huge value is a problem naming its key, the pusher stays ready, every country change after a quiet second reaches KV within ${REACH_MS / 1000} s, and each of a burst of 10 a second within ${BURST_REACH_MS / 1000} s (one write slot more), KV matching etcd after`,
  budgetMs: (q) => (q ? 75_000 : 150_000),
  async run(ctx) {
    const lone = ctx.quick ? 8 : 20;
    const burst = ctx.quick ? 20 : 60;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const etcd = await scenarioEtcd(ctx);
    const client = createEtcdClient({ endpoints: [etcd.endpoint] });
    ctx.defer(() => client.close());
    const { prefix, electionKey } = names("huge");
    await seedWorld(client, prefix, 10);
    const t0 = Date.now();
    for (const i of [1, 2, 3]) {
      const pad = String.fromCharCode(96 + i).repeat(HUGE_BYTES);
      await client
        .put(`${prefix}health/huge-${i}`)
        .value(JSON.stringify({ status: "healthy", pad }));
    }
    await loadJunk(client, prefix, JUNK_KEYS);
    ctx.progress(`loaded ${JUNK_KEYS} junk keys and 3 × 1.4 MB in ${secs(Date.now() - t0)}`);

    const kv = await startRecordedKv(ctx);
    const pusher = await startScenarioPusher(ctx, {
      id: "huge-1",
      etcdEndpoint: etcd.endpoint,
      prefix,
      electionKey,
      electionTtl: 15,
      kvEnv: kv.env(),
    });
    await pusher.ready();
    const seed = await expectedMap(client, prefix);
    const first = await waitConverged(() => kv.routes(), seed, 30_000);
    if (first === null) {
      return {
        runs: 0,
        figure: "the pusher never pushed the seeded state",
        failures: [`no first push: ${describeMismatch(kv.routes(), seed)}`],
      };
    }
    ctx.progress(`first push matched etcd ${secs(first)} after the pusher answered`);
    const problems = kv.routes()?.problems.join("\n") ?? "";
    for (const i of [1, 2, 3]) {
      inv.check(
        problems.includes(`health/huge-${i}`),
        "a 1.4 MB value not reported as a problem naming its key",
        () => `health/huge-${i} missing from ${problems.slice(0, 200)}`,
      );
    }

    const reach: number[] = [];
    /** When KV first reflected `rev` (`routes` or `meta`): from the stand-in's own write log. */
    const arrivedAt = (rev: number): number | null =>
      kvTimeline(kv.writes).find((a) => a.rev >= rev)?.at ?? null;
    /** Puts a new rule for a country; resolves once KV holds it, or after 10 s. */
    const change = async (n: number, limitMs: number): Promise<void> => {
      const cc = COUNTRIES[Math.floor(r() * 10)] ?? "DE";
      const primary = POOLS[n % POOLS.length] ?? "fra-1";
      const fallback = POOLS[(n + 1) % POOLS.length] ?? "ams-1";
      const started = Date.now();
      const res = await client
        .put(`${prefix}country/${cc}`)
        .value(JSON.stringify({ primary, fallbacks: [fallback] }))
        .exec();
      const rev = Number(res.header.revision);
      let at = arrivedAt(rev);
      while (at === null && Date.now() - started < 10_000) {
        await sleep(50);
        at = arrivedAt(rev);
      }
      const took = (at ?? Date.now()) - started;
      reach.push(took);
      inv.check(
        at !== null && took <= limitMs,
        `a ${limitMs === REACH_MS ? "lone" : "burst"} country change took over ${limitMs / 1000} s to reach KV`,
        () =>
          `change ${n} (${cc} → ${primary}) at rev ${rev}: ${at === null ? "never" : secs(took)}`,
      );
    };
    // Lone changes after a quiet second, then a burst of 10 a second.
    for (let n = 0; n < lone; n++) {
      await sleep(1_200);
      await change(n, REACH_MS);
    }
    const inflight: Promise<void>[] = [];
    for (let n = lone; n < lone + burst; n++) {
      inflight.push(change(n, BURST_REACH_MS));
      await sleep(100);
    }
    await Promise.all(inflight);
    const final = await expectedMap(client, prefix);
    const settled = await waitConverged(() => kv.routes(), final, 10_000);
    inv.check(settled !== null, "KV did not match etcd after the changes", () =>
      describeMismatch(kv.routes(), final),
    );
    const healthz = await pusher.healthz();
    inv.check(healthz === 200, "the pusher is not ready", () => `/healthz answered ${healthz}`);
    const metrics = (await pusher.metrics()) ?? "";
    const pages = Number(/^edge_pusher_range_pages_total (\d+)/m.exec(metrics)?.[1] ?? 0);
    const reads = Number(/^edge_pusher_range_reads_total (\d+)/m.exec(metrics)?.[1] ?? 0);
    inv.check(
      reads > 0 && pages > reads,
      "the reads were not paged",
      () => `${reads} reads, ${pages} pages`,
    );
    const stats = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return `p50 ${sorted[Math.floor(sorted.length / 2)] ?? 0} ms, max ${sorted.at(-1) ?? 0} ms`;
    };
    return {
      runs: reach.length,
      figure: `${JUNK_KEYS} junk keys + 3 × 1.4 MB: first push ${secs(first)}; ${lone} lone changes reached KV ${stats(reach.slice(0, lone))}; ${burst} in a burst ${stats(reach.slice(lone))}; ${reads} reads in ${pages} pages`,
      failures: inv.failures(),
    };
  },
};
