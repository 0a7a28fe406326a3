import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { describeMismatch, expectedMap, waitConverged } from "../../../testkit/map-oracle.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { writeRevisions } from "../support/bulk-writes.js";
import { randomRule } from "../support/intent-writer.js";
import { startProxiedPusher } from "../support/proxied-pusher.js";

export const compactionWhileDisconnected: Scenario = {
  id: 3,
  title: "Compaction while disconnected",
  invariant:
    "cut off, written to, compacted past its revision, reconnected: converges within 2 s; a write 10 s later still arrives",
  budgetMs: (q) => (q ? 90_000 : 420_000),
  async run(ctx) {
    const rounds = ctx.quick ? 2 : 20;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const { etcd, client, proxy, prefix, kv, pusher } = await startProxiedPusher(ctx, "compact");
    let worst = 0;
    let worstLate = 0;
    let converged = 0;
    let late = 0;
    for (let i = 0; i < rounds; i++) {
      const pushedBefore = kv.routes()?.rev ?? 0;
      proxy.disconnect();
      const rev = await writeRevisions(client, prefix, 50, r, 8);
      await client.getAll().prefix(prefix).limit(1).exec();
      etcd.ctl("compact", String(rev));
      inv.check(
        rev > pushedBefore,
        "setup: compaction not past the pusher's revision",
        () => `${rev} ≤ ${pushedBefore}`,
      );
      const expected = await expectedMap(client, prefix);
      proxy.accept();
      const took = await waitConverged(() => kv.routes(), expected, 15_000);
      if (
        inv.check(
          took !== null && took <= 2_000,
          "not converged within 2 s of reconnecting",
          () =>
            `round ${i + 1}: ${took === null ? describeMismatch(kv.routes(), expected) : secs(took)}`,
        )
      ) {
        converged += 1;
      }
      worst = Math.max(worst, took ?? 15_000);
      await sleep(10_000);
      await client.put(`${prefix}country/DE`).value(randomRule(r)).exec();
      await client
        .put(`${prefix}epoch`)
        .value(String(1000 + i))
        .exec();
      const later = await expectedMap(client, prefix);
      const lateTook = await waitConverged(() => kv.routes(), later, 10_000);
      if (
        inv.check(
          lateTook !== null && lateTook <= 5_000,
          "a write 10 s after reconnecting did not arrive within 5 s (silent stall)",
          () =>
            `round ${i + 1}: ${lateTook === null ? describeMismatch(kv.routes(), later) : secs(lateTook)}`,
        )
      ) {
        late += 1;
      }
      worstLate = Math.max(worstLate, lateTook ?? 10_000);
      ctx.progress(
        `round ${i + 1}/${rounds}: converged in ${took === null ? "never" : secs(took)}, late write in ${lateTook === null ? "never" : secs(lateTook)}`,
      );
    }
    await pusher.status();
    return {
      runs: rounds,
      figure: `${rounds} compactions past the pusher, converged ≤2 s ${converged}/${rounds} (slowest ${secs(worst)}), late write arrived ${late}/${rounds} (slowest ${secs(worstLate)})`,
      failures: inv.failures(),
    };
  },
};
