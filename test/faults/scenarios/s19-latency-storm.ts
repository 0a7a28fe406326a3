import { setTimeout as sleep } from "node:timers/promises";
import { shedTarget } from "../../../core/index.js";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { startOrigins } from "../../../testkit/origins.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { checkerWorld } from "../support/checker-world.js";
import { parseMap } from "../support/etcd-world.js";

const SLOW = { low: 800, high: 2000 } as const;
const WATERMARK = SLOW.low;
const SWING = 0.3;
/** A change this close to a whole recover period counts as a full one (timer and clock jitter). */
const SLACK_MS = 300;

export const latencyStorm: Scenario = {
  id: 19,
  title: "a p90 wandering ±30 % around a watermark",
  invariant:
    "fra-1 (slow_ms 800/2000) is judged by a real checker whose check URL reports a p90 that jumps to a random point within ±30 % of 800 ms every second, for 5 min (60 s quick): the shed share never goes back and forth (a rise and a fall) more than once per recover period (SHED_RECOVER_SECONDS 10, 5 quick), falls one step at a time and only a recover period after its last change, and never exceeds what the highest p90 asks for",
  budgetMs: (q) => (q ? 120_000 : 420_000),
  async run(ctx) {
    const stormMs = ctx.quick ? 60_000 : 300_000;
    const recoverS = ctx.quick ? 5 : 10;
    const recoverMs = recoverS * 1000;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const origins = await startOrigins(["fra-1"]);
    ctx.defer(() => origins.close());
    let p90: number = WATERMARK;
    origins.get("fra-1").respond(() => ({
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ p90_ms: p90 }),
    }));
    const world = await checkerWorld(
      ctx,
      "storm",
      { slow_ms: SLOW },
      { SHED_RECOVER_SECONDS: String(recoverS) },
    );
    const checker = world.checker("c1", `${origins.get("fra-1").url}/healthz`, [
      "--ttl",
      "5",
      "--interval",
      "0.5",
      "--check-timeout",
      "1",
    ]);
    await world.waitCheckers(1);
    await world.waitMap("fra-1 serving DE", (m) => m.countries.DE?.pool === "fra-1");
    const from = world.kv.writes.length;
    const checkerFrom = (await world.checkerValue("c1"))?.version ?? 0;
    ctx.progress(`storm for ${secs(stormMs)}, recover period ${recoverS} s`);
    const t0 = Date.now();
    let highest = 0;
    while (Date.now() - t0 < stormMs) {
      p90 = Math.round(WATERMARK * (1 - SWING + 2 * SWING * r()));
      highest = Math.max(highest, p90);
      await sleep(1_000);
    }
    const checkerTo = (await world.checkerValue("c1"))?.version ?? 0;

    const writes = world.kv.writes.slice(from).filter((w) => w.key === "routes");
    const changes: { at: number; share: number; dir: 1 | -1 }[] = [];
    let share = 0;
    let lastChangeAt = t0;
    const reversalsAt: number[] = [];
    for (const w of writes) {
      const m = parseMap(w.value);
      if (!m) continue;
      const next = m.sheds?.["fra-1"]?.share ?? 0;
      if (next === share) continue;
      const dir = next > share ? 1 : -1;
      const prev = changes.at(-1);
      if (prev && prev.dir !== dir) {
        // one back and forth is two reversals; a second one within the same period is a third
        const twoBack = reversalsAt.at(-2);
        inv.check(
          twoBack === undefined || w.at - twoBack >= recoverMs - SLACK_MS,
          "the share went back and forth more than once within one recover period",
          () =>
            `reversals at +${secs((twoBack ?? t0) - t0)}, +${secs((reversalsAt.at(-1) ?? t0) - t0)} and +${secs(w.at - t0)}`,
        );
        reversalsAt.push(w.at);
      }
      if (dir === -1) {
        inv.check(
          share - next === 10,
          "the share fell by more than one step",
          () => `${share} → ${next} at +${secs(w.at - t0)}`,
        );
        inv.check(
          w.at - lastChangeAt >= recoverMs - SLACK_MS,
          "the share fell before a recover period had passed",
          () => `${share} → ${next} ${secs(w.at - lastChangeAt)} after the last change`,
        );
      }
      inv.check(
        next <= shedTarget(highest, SLOW),
        "the share exceeded what the p90 asked for",
        () => `${next} with the highest p90 ${highest}`,
      );
      changes.push({ at: w.at, share: next, dir });
      share = next;
      lastChangeAt = w.at;
    }
    inv.check(checker.alive(), "the checker exited", () => checker.output().slice(-300));
    inv.check(world.pusher.proc.alive(), "pusher exited", () =>
      world.pusher.proc.output().slice(-300),
    );
    const hours = (Date.now() - t0) / 3_600_000;
    const checkerWrites = checkerTo - checkerFrom;
    return {
      runs: changes.length,
      figure: `${secs(stormMs)} at 800 ms ±30 %: ${changes.length} shed changes (${reversalsAt.length} reversals; shares ${[...new Set(changes.map((c) => c.share))].sort((a, b) => a - b).join("/") || "0"}), ${writes.length} KV routes writes (${Math.round(writes.length / hours)}/h), ${checkerWrites} checker etcd writes`,
      failures: inv.failures(),
      notes: [
        `${changes.filter((c) => c.dir === -1).length} falls and ${changes.filter((c) => c.dir === 1).length} rises in ${secs(stormMs)} (recover period ${recoverS} s)`,
        `shed timeline: ${changes.map((c) => `+${secs(c.at - t0)} ${c.share}`).join(", ") || "none"}`,
      ],
    };
  },
};
