import { seededRandom } from "../../../testkit/kv-standin.js";
import { describeMismatch, expectedMap, waitConverged } from "../../../testkit/map-oracle.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { writeRevisions } from "../support/bulk-writes.js";
import { firstRevRegression } from "../support/kv-recorder.js";
import { startProxiedPusher } from "../support/proxied-pusher.js";

/** Bytes after reconnecting that count as "the first batch" (past the HTTP/2 handshake). */
const FIRST_BATCH_BYTES = 4_096;

export const reconnectCatchup: Scenario = {
  id: 2,
  title: "Reconnect during catch-up",
  invariant:
    "the pusher↔etcd connection is cut after the first batch of a >3,000-revision backlog; the final KV state is exact every time",
  budgetMs: (q) => (q ? 120_000 : 360_000),
  async run(ctx) {
    const rounds = ctx.quick ? 3 : 20;
    const backlog = 3_100;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const { client, proxy, prefix, kv, pusher } = await startProxiedPusher(ctx, "catchup");
    let midCatchup = 0;
    let exact = 0;
    let worst = 0;
    for (let i = 0; i < rounds; i++) {
      proxy.disconnect();
      await writeRevisions(client, prefix, backlog, r);
      const expected = await expectedMap(client, prefix);
      proxy.accept();
      const t0 = Date.now();
      if (await proxy.waitForBytes(FIRST_BATCH_BYTES, 15_000)) {
        proxy.cut();
        midCatchup += 1;
      }
      const took = await waitConverged(() => kv.routes(), expected, 30_000);
      if (
        inv.check(
          took !== null,
          "final KV state not exact",
          () => `round ${i + 1}: ${describeMismatch(kv.routes(), expected)}`,
        )
      ) {
        exact += 1;
        worst = Math.max(worst, Date.now() - t0);
      }
      if ((i + 1) % 5 === 0) ctx.progress(`${i + 1}/${rounds} rounds, ${exact} exact`);
    }
    await pusher.status();
    const regression = firstRevRegression(kv.writes);
    inv.check(regression === null, "rev in KV went backwards", () => regression ?? "");
    inv.check(
      midCatchup > 0,
      "never cut during a catch-up (the attack did not happen)",
      () => `${midCatchup}/${rounds}`,
    );
    return {
      runs: rounds,
      figure: `${rounds} rounds × ${backlog} revisions, cut after the first ${FIRST_BATCH_BYTES / 1024} KiB in ${midCatchup}, exact ${exact}/${rounds}, slowest ${secs(worst)}`,
      failures: inv.failures(),
    };
  },
};
