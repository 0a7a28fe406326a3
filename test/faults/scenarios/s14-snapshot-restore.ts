import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { serializeMap } from "../../../core/index.js";
import { snapshotTool } from "../../../testkit/etcd-cluster.js";
import { describeMismatch, matches, waitConverged } from "../../../testkit/map-oracle.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { expectedMapOf, seededCluster, startClusterPusher } from "../support/cluster-world.js";
import { startWarmWorker } from "../support/warm-worker.js";

const KV_LIMIT_MS = 10_000;
const ISOLATE_SECONDS = 5;

export const snapshotRestore: Scenario = {
  id: 14,
  title: "etcd restored from a snapshot",
  invariant:
    "3-member etcd restored from an older snapshot (a new history, lower revisions; etcdutl snapshot restore, or etcdctl on 3.4, which has no etcdutl) under a running pusher and a warm Worker: KV on the restored state within 10 s, the Worker within 10 s + ISOLATE_CACHE_SECONDS; the next change in the new history likewise; a stale KV copy of the old history never takes the isolate back",
  budgetMs: (q) => (q ? 90_000 : 180_000),
  async run(ctx) {
    const rounds = ctx.quick ? 1 : 2;
    const inv = new Invariants();
    const world = await seededCluster(ctx, "restore");
    const { cluster, mc, prefix } = world;
    const { kv, pusher } = await startClusterPusher(ctx, world);
    const warm = await startWarmWorker(ctx, kv, "DE", ISOLATE_SECONDS);
    const dir = mkdtempSync(join(tmpdir(), "faults-restore-"));
    ctx.defer(() => rmSync(dir, { recursive: true, force: true }));
    const setDe = (pool: string) =>
      mc.any((c) =>
        c
          .put(`${prefix}country/DE`)
          .value(JSON.stringify({ primary: pool, fallbacks: [] }))
          .exec(),
      );
    const figures: string[] = [`restored with ${await snapshotTool()}`];
    for (let round = 0; round < rounds; round++) {
      // The snapshot holds DE → fra-1; then the old history moves on to DE → waw-1.
      await setDe("fra-1");
      const snap = join(dir, `snap-${round}.db`);
      await cluster.snapshotSave(snap);
      for (const pool of ["ams-1", "mad-1", "waw-1"]) await setDe(pool);
      const oldExpected = await expectedMapOf(mc, prefix);
      if ((await waitConverged(() => kv.routes(), oldExpected, 20_000)) === null)
        throw new Error(
          `the pusher never pushed the old history: ${describeMismatch(kv.routes(), oldExpected)}`,
        );
      if (!(await warm.waitFor((s) => s.pool === "waw-1", 20_000)))
        throw new Error("the Worker never served the old history's DE → waw-1");
      const oldMap = kv.routes();
      const oldText = kv.standin.values.get("routes") ?? "";

      const restoreBegan = Date.now();
      await cluster.restoreFromSnapshot(snap);
      const restoredAt = Date.now();
      const restored = await expectedMapOf(mc, prefix);
      const kvMs = await waitConverged(() => kv.routes(), restored, KV_LIMIT_MS);
      inv.check(kvMs !== null, "KV not on the restored state within 10 s", () =>
        describeMismatch(kv.routes(), restored),
      );
      const wLimit = KV_LIMIT_MS + ISOLATE_SECONDS * 1000 - (Date.now() - restoredAt);
      const oldRev = oldMap?.rev ?? 0;
      const wHit = await warm.waitFor(
        (s) => s.pool === "fra-1" && s.rev !== null && s.rev < oldRev,
        Math.max(0, wLimit),
      );
      inv.check(
        wHit !== null,
        "warm Worker not on the restored state within 10 s + isolate window",
        () => JSON.stringify(warm.last() ?? null),
      );
      const workerMs = wHit ? wHit.at - restoredAt : null;

      // The new history moves on below the old one's revisions.
      const next = await setDe("par-1");
      const nextAt = Date.now();
      const nextRev = Number(next.header.revision);
      inv.check(nextRev < oldRev, "restore did not lower the revision", () => `${nextRev}`);
      const nextExpected = await expectedMapOf(mc, prefix);
      const nextKvMs = await waitConverged(() => kv.routes(), nextExpected, KV_LIMIT_MS);
      inv.check(nextKvMs !== null, "change in the new history not in KV within 10 s", () =>
        describeMismatch(kv.routes(), nextExpected),
      );
      const nHit = await warm.waitFor(
        (s) => s.pool === "par-1" && s.rev !== null && s.rev >= nextRev && s.rev < oldRev,
        Math.max(0, KV_LIMIT_MS + ISOLATE_SECONDS * 1000 - (Date.now() - nextAt)),
      );
      inv.check(
        nHit !== null,
        "change in the new history not in the Worker within 10 s + isolate window",
        () => JSON.stringify(warm.last() ?? null),
      );

      // A KV location still serving the old history's copy must not take the isolate back
      // (judged only once the isolate is on the new history at all).
      const newMap = kv.routes();
      let stale = "not tried";
      if (nHit) {
        warm.freezeCopy();
        await warm.worker.putMap(oldText || serializeMap(oldMap ?? nextExpected));
        const back = await warm.waitFor(
          (s) => s.pool === "waw-1" || (s.rev ?? 0) > nextRev,
          (ISOLATE_SECONDS + 3) * 1000,
        );
        inv.check(
          back === null,
          "a stale KV copy of the old history took the warm isolate back",
          () => JSON.stringify(back),
        );
        stale = back === null ? "ignored" : "TAKEN";
        await warm.worker.putMap(
          kv.standin.values.get("routes") ?? serializeMap(newMap ?? nextExpected),
        );
        warm.resumeCopy();
      }
      figures.push(
        `round ${round + 1}: restore took ${secs(restoredAt - restoreBegan)}, then: rev ${oldMap?.rev}→${restored.rev} (history ${oldMap?.history ?? "?"}→${newMap?.history ?? "?"}), KV ${kvMs === null ? "NEVER" : secs(kvMs)}, Worker ${workerMs === null ? "NEVER" : secs(workerMs)}, next change KV ${nextKvMs === null ? "NEVER" : secs(nextKvMs)} / Worker ${nHit ? secs(nHit.at - nextAt) : "NEVER"}, stale old-history copy ${stale}`,
      );
      ctx.progress(figures[figures.length - 1] ?? "");
      if (round + 1 < rounds) await sleep(500);
    }
    inv.check(pusher.proc.alive(), "pusher exited", () => pusher.proc.output().slice(-300));
    const fresh = kv.routes();
    const final = await expectedMapOf(mc, prefix);
    inv.check(fresh !== null && matches(fresh, final), "KV ≠ compile(etcd) at the end", () =>
      describeMismatch(fresh, final),
    );
    return { runs: rounds, figure: figures.join("; "), failures: inv.failures() };
  },
};
