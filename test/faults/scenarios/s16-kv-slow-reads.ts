import { setTimeout as sleep } from "node:timers/promises";
import { type CompiledMap, compile, serializeMap } from "../../../core/index.js";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { startOrigins } from "../../../testkit/origins.js";
import { startWorker } from "../../../testkit/worker.js";
import { READ_BUDGET_MS, READ_RETRY_MS } from "../../../worker/map-cache.js";
import { Invariants, type Scenario } from "../scenario.js";
import { bounded, pct, type Timed } from "../support/edge-timing.js";

/** Edge time minus origin time above this is a response that waited on something. */
const WAIT_MS = 50;
const POOLS = ["fra-1", "ams-1", "par-1"] as const;
const COUNTRIES = ["DE", "FR", "NL", "US", "JP"] as const;

function mapAt(rev: number, origins: Record<string, string>): CompiledMap {
  const p = (i: number) => POOLS[(rev + i) % POOLS.length] ?? "par-1";
  const entries: [string, unknown][] = [
    ...POOLS.map((pool): [string, unknown] => [`pool/${pool}`, { origin: origins[pool] }]),
    ...POOLS.map((pool): [string, unknown] => [`health/${pool}`, { status: "healthy" }]),
    ["country/_default", { primary: p(0), fallbacks: [p(1)] }],
    ["country/DE", { primary: p(1), fallbacks: [p(2)] }],
    ["country/FR", { primary: p(2), fallbacks: [p(0)] }],
  ];
  return compile(
    {
      revision: rev,
      entries: entries.map(([k, v]) => ({ key: `/s16/${k}`, value: JSON.stringify(v) })),
    },
    {
      carried: null,
      prefix: "/s16/",
      floorPool: "par-1",
      originTemplate: origins["par-1"] ?? "",
      now: new Date(),
    },
  ).map;
}

export const kvSlowReads: Scenario = {
  id: 16,
  title: "KV reads delayed and hanging under load",
  invariant: `while the isolate holds a map, 0 responses wait on KV (edge time minus origin time over ${WAIT_MS} ms, beyond what a same-workerd control request took at the same time); a cold isolate waits at most ${READ_BUDGET_MS} ms; one KV read in flight at a time; revisions never go back; the newest map is served within seconds of KV recovering`,
  budgetMs: (q) => (q ? 90_000 : 180_000),
  async run(ctx) {
    const phaseMs = ctx.quick ? 5_000 : 12_000;
    // Few enough that requests do not queue much on two shared cores.
    const loops = 4;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const origins = await startOrigins([...POOLS]);
    ctx.defer(() => origins.close());
    for (const o of origins.all) {
      o.respond(() => ({ status: 200, body: `served by ${o.name}`, delayMs: Math.floor(r() * 4) }));
    }
    const urls = Object.fromEntries(origins.all.map((o) => [o.name, o.url]));
    const worker = await startWorker(
      { ISOLATE_CACHE_SECONDS: "1", FLOOR_POOL: "par-1", ORIGIN_TEMPLATE: urls["par-1"] ?? "" },
      { control: true },
    );
    ctx.defer(() => worker.dispose());
    const control = worker.control;
    if (!control) throw new Error("no control Worker");

    let rev = 1;
    await control.putMap(serializeMap(mapAt(rev, urls)));
    await worker.putMap(serializeMap(mapAt(rev, urls)), { settle: false });
    // A pusher writing a new map twice a second throughout.
    let writing = true;
    const writer = (async () => {
      while (writing) {
        await sleep(500);
        rev += 1;
        await worker.putMap(serializeMap(mapAt(rev, urls)), { settle: false });
      }
    })();
    ctx.defer(async () => {
      writing = false;
      await writer;
    });

    const edge: Timed[] = [];
    const controls: Timed[] = [];
    const t0 = performance.now();
    const load = async (ms: number) => {
      const until = performance.now() + ms;
      const loop = async (i: number) => {
        while (performance.now() < until) {
          const country = COUNTRIES[(i + edge.length) % COUNTRIES.length] ?? "DE";
          const start = performance.now();
          // Each edge request has a twin sent to the control at the same instant.
          const [e, c] = await Promise.all([
            bounded(worker.dispatch("/seg.ts", { country }), start),
            bounded(control.dispatch("/seg.ts", { country }), start),
          ]);
          edge.push(e);
          controls.push(c);
        }
      };
      await Promise.all(Array.from({ length: loops }, (_, i) => loop(i)));
    };
    const phases: { name: string; from: number; to: number; reads: number }[] = [];
    const phase = async (name: string, ms: number, set: () => void) => {
      set();
      const from = edge.length;
      const reads = worker.kv.started;
      await load(ms);
      phases.push({ name, from, to: edge.length, reads: worker.kv.started - reads });
      ctx.progress(`${name}: ${edge.length - from} responses`);
    };

    // A cold isolate under load whose KV answers in 3 s: its first requests wait, bounded. One
    // `/__edge/` 404 first, which reads no map: the isolate's own first request (its routes'
    // set-up and first compiles) is not a wait on KV.
    const warmUp = await worker.dispatch("/__edge/none", { country: "DE" });
    if (warmUp.status !== 404 || worker.kv.started !== 0)
      throw new Error(`the warm-up request read KV or was answered ${warmUp.status}`);
    await phase("cold, KV 3 s", 4_000, () => worker.kv.delay(3_000));
    await phase("warm, KV 3 s", phaseMs, () => undefined);
    await phase("warm, KV hangs", phaseMs, () => worker.kv.hang());
    const hangPhase = phases.at(-1);
    await phase("warm, KV 50 ms", Math.min(phaseMs, 4_000), () => worker.kv.delay(50));
    writing = false;
    await writer;
    const newest = rev;
    const recovered = performance.now();
    let caughtUp: number | null = null;
    while (performance.now() - recovered < 10_000) {
      const res = await worker.dispatch("/", { country: "DE" });
      if (Number(res.headers.get("x-edge-revision")) === newest) {
        caughtUp = performance.now() - recovered;
        break;
      }
      await sleep(50);
    }

    // The verdicts.
    // The cold phase is judged by the read budget; the no-wait count covers the warm isolate
    // (the cold phase's first answers with a map also open the first connections to origins).
    const warmFrom = phases[1]?.from ?? edge.length;
    const cold = edge.slice(0, warmFrom).filter((t) => t.rev === 0);
    const held = edge.slice(warmFrom).filter((t) => t.rev !== 0);
    // A slow answer is the machine's doing when a control request in flight at the same time
    // was about as slow: only what the edge took beyond the slowest such control counts.
    const controlDuring = (t: Timed) =>
      Math.max(
        0,
        ...controls.filter((c) => c.start < t.end && c.end > t.start).map((c) => c.excess),
      );
    const slow = held.filter((t) => t.excess > WAIT_MS);
    const stalls = slow.filter((t) => t.excess - controlDuring(t) <= WAIT_MS);
    for (const t of slow) {
      const control = controlDuring(t);
      inv.check(
        t.excess - control <= WAIT_MS,
        "a response waited on KV while a map was held",
        () =>
          `+${t.excess.toFixed(0)} ms (control ${control.toFixed(0)} ms) at ${((t.start - t0) / 1000).toFixed(2)} s (rev ${t.rev})`,
      );
    }
    for (const t of cold) {
      const control = controlDuring(t);
      inv.check(
        t.excess - control <= READ_BUDGET_MS + WAIT_MS,
        "a cold request waited past the read budget",
        () => `+${t.excess.toFixed(0)} ms (control ${control.toFixed(0)} ms)`,
      );
    }
    inv.check(
      cold.some((t) => t.excess > READ_BUDGET_MS - 100),
      "no cold request waited for KV (the timing would be blind)",
      () => `${cold.length} cold answers, slowest ${Math.max(0, ...cold.map((t) => t.excess))} ms`,
    );
    inv.check(
      edge.every((t) => t.status === 200),
      "a response other than 200 (0: none within the client's 5 s)",
      () => String(edge.find((t) => t.status !== 200)?.status),
    );
    // Unanswered requests (rev -1) are counted above; they carry no revision.
    const answered = edge.filter((t) => t.rev >= 0);
    const byStart = [...answered].sort((a, b) => a.start - b.start);
    const byEnd = [...answered].sort((a, b) => a.end - b.end);
    let seenMax = 0;
    let j = 0;
    for (const t of byStart) {
      while (j < byEnd.length && (byEnd[j]?.end ?? 0) <= t.start) {
        seenMax = Math.max(seenMax, byEnd[j]?.rev ?? 0);
        j += 1;
      }
      inv.check(t.rev >= seenMax, "revision went back", () => `rev ${t.rev} after ${seenMax}`);
    }
    if (hangPhase) {
      const answers = edge.slice(hangPhase.from, hangPhase.to);
      inv.check(
        answers.some((t) => t.degraded === "stale-map"),
        "a hanging KV never showed as stale-map",
        () => `${answers.length} answers`,
      );
      const allowed = Math.ceil(phaseMs / READ_RETRY_MS) + 1;
      inv.check(
        hangPhase.reads <= allowed,
        "more than one KV read in flight while KV hangs",
        () => `${hangPhase.reads} reads started in ${phaseMs} ms (allowed ${allowed})`,
      );
    }
    inv.check(
      caughtUp !== null,
      "newest map not served after KV recovered",
      () => `rev ${newest} not served in 10 s`,
    );

    const figures = phases.map((ph) => {
      const xs = edge
        .slice(ph.from, ph.to)
        .filter((t) => t.rev > 0)
        .map((t) => t.excess);
      return `${ph.name}: ${ph.to - ph.from} answers, edge−origin p50 ${pct(xs, 50).toFixed(1)} / p99 ${pct(xs, 99).toFixed(1)} / max ${Math.max(0, ...xs).toFixed(0)} ms, ${ph.reads} KV reads`;
    });
    const cx = controls.map((c) => c.excess);
    return {
      runs: edge.length,
      figure: `${edge.length} answers, ${slow.length} over ${WAIT_MS} ms with a map held, ${slow.length - stalls.length} beyond the control, cold wait max ${Math.max(0, ...cold.map((t) => t.excess)).toFixed(0)} ms, caught up in ${caughtUp === null ? "—" : `${(caughtUp / 1000).toFixed(1)} s`}`,
      failures: inv.failures(),
      notes: [
        ...figures,
        `control (same workerd, no KV reads): ${controls.length} answers, p50 ${pct(cx, 50).toFixed(1)} / p99 ${pct(cx, 99).toFixed(1)} / max ${Math.max(0, ...cx).toFixed(0)} ms; ${stalls.length} edge answers over ${WAIT_MS} ms were matched by a control as slow (machine stalls, not KV)`,
      ],
    };
  },
};
