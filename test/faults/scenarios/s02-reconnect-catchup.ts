import { seededRandom } from "../../helpers/kv-standin.js";
import { startTcpProxy } from "../../helpers/tcp-proxy.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { writeRevisions } from "../support/bulk-writes.js";
import {
  describeMismatch,
  expectedMap,
  names,
  scenarioEtcd,
  seedWorld,
  testClient,
  waitConverged,
} from "../support/etcd-world.js";
import { firstRevRegression, startRecordedKv } from "../support/kv-recorder.js";
import { startPusherProcess } from "../support/pusher-process.js";

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
    const etcd = await scenarioEtcd(ctx);
    const client = testClient(ctx, etcd.endpoint);
    const proxy = await startTcpProxy(etcd.clientPort);
    ctx.defer(() => proxy.close());
    const { prefix, electionKey } = names("catchup");
    await seedWorld(client, prefix, 10);
    const kv = await startRecordedKv(ctx);
    const pusher = await startPusherProcess(ctx, {
      id: "catchup-1",
      etcdEndpoint: proxy.endpoint,
      prefix,
      electionKey,
      electionTtl: 15,
      kvEnv: kv.env(),
    });
    await pusher.ready();
    if (
      (await waitConverged(() => kv.routes(), await expectedMap(client, prefix), 30_000)) === null
    ) {
      throw new Error("the pusher never pushed the seed state");
    }
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
