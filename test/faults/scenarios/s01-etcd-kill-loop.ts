import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { fastRecoveryBreaker } from "../../../adapters/etcd-fault-handling.js";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { describeMismatch, expectedMap, waitConverged } from "../../../testkit/map-oracle.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { names, scenarioEtcd, seedWorld } from "../support/etcd-world.js";
import { IntentWriter } from "../support/intent-writer.js";
import { firstRevRegression, routesRevisions, startRecordedKv } from "../support/kv-recorder.js";
import { startScenarioPusher } from "../support/pusher-process.js";

export const etcdKillLoop: Scenario = {
  id: 1,
  title: "etcd kill loop",
  invariant:
    "after the writes stop, KV routes = compile(range read of etcd) within 5 s; the rev in KV never goes backwards",
  budgetMs: (q) => (q ? 120_000 : 360_000),
  async run(ctx) {
    const writes = ctx.quick ? 1_000 : 5_000;
    const kills = ctx.quick ? 5 : 20;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const etcd = await scenarioEtcd(ctx);
    const client = new Etcd3({
      hosts: etcd.endpoint,
      defaultCallOptions: () => ({ deadline: Date.now() + 3_000 }),
      // The writer must get back to work quickly after each restart (not what is under test).
      faultHandling: { host: fastRecoveryBreaker },
      grpcOptions: {
        "grpc.initial_reconnect_backoff_ms": 100,
        "grpc.max_reconnect_backoff_ms": 1_000,
      },
    });
    ctx.defer(() => client.close());
    const { prefix, electionKey } = names("kill");
    await seedWorld(client, prefix, 10);
    const kv = await startRecordedKv(ctx);
    const pusher = await startScenarioPusher(ctx, {
      id: "kill-1",
      etcdEndpoint: etcd.endpoint,
      prefix,
      electionKey,
      electionTtl: 5,
      kvEnv: kv.env(),
    });
    await pusher.ready();
    if (
      (await waitConverged(() => kv.routes(), await expectedMap(client, prefix), 30_000)) === null
    ) {
      throw new Error("the pusher never pushed the seed state");
    }

    const writer = new IntentWriter(client, prefix, r);
    let issued = 0;
    let acked = 0;
    let inflight = 0;
    let failed = 0;
    let killsDone = 0;
    let etcdUp = true;
    const kinds = new Map<string, number>();
    const killAt = Array.from({ length: kills }, (_, k) =>
      Math.floor(((k + 1) * writes) / (kills + 1)),
    );
    const killer = (async () => {
      for (const at of killAt) {
        while (acked < at) await sleep(5);
        etcdUp = false;
        await etcd.kill("SIGKILL");
        await sleep(Math.floor(r() * 400));
        await etcd.restart();
        etcdUp = true;
        killsDone += 1;
        if (killsDone % 5 === 0)
          ctx.progress(`${killsDone}/${kills} kills, ${acked}/${issued} writes acknowledged`);
      }
    })();
    const sampler = setInterval(() => {
      void pusher.status();
    }, 2_000);
    const workers = Array.from({ length: 6 }, async () => {
      // Each slot retries until etcd acknowledges a write: the run makes `writes` acknowledged
      // writes; the ones cut off in flight (outcome unknown) are counted apart.
      while (acked + inflight < writes) {
        inflight += 1;
        issued += 1;
        try {
          const kind = await writer.write();
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
          acked += 1;
        } catch (e) {
          // Only etcd being down is expected here; anything else is a bug in the harness.
          const text = e instanceof Error ? `${e.name} ${e.message}` : String(e);
          if (
            e instanceof TypeError ||
            e instanceof RangeError ||
            /INVALID_ARGUMENT|Unexpected/.test(text)
          )
            throw e;
          failed += 1;
          await sleep(etcdUp ? 50 : 100);
        } finally {
          inflight -= 1;
        }
      }
    });
    await Promise.all(workers);
    await killer;
    clearInterval(sampler);
    const stoppedAt = Date.now();

    let expected = null;
    while (!expected && Date.now() - stoppedAt < 10_000) {
      expected = await expectedMap(client, prefix).catch(() => null);
    }
    if (!expected) throw new Error("cannot read etcd after the writes");
    const tookMs = await waitConverged(
      () => kv.routes(),
      expected,
      5_000 - (Date.now() - stoppedAt),
    );
    const convergedIn = tookMs === null ? null : Date.now() - stoppedAt;
    inv.check(convergedIn !== null, "KV ≠ compile(etcd) 5 s after the writes stopped", () =>
      describeMismatch(kv.routes(), expected),
    );
    const regression = firstRevRegression(kv.writes);
    inv.check(regression === null, "rev in KV went backwards", () => regression ?? "");
    await pusher.metrics();
    const revs = routesRevisions(kv.writes);
    return {
      runs: killsDone,
      figure: `${killsDone} kill -9, ${acked} acked writes (+${failed} cut off in flight), ${revs.length} KV pushes, converged in ${convergedIn === null ? "NEVER (>5 s)" : secs(convergedIn)}, rev regressions ${regression ? 1 : 0}`,
      failures: inv.failures(),
      notes: [
        `write mix: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")}; final etcd rev ${expected.rev}, KV rev ${kv.routes()?.rev}`,
      ],
    };
  },
};
