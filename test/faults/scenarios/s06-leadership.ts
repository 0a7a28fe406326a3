import { setTimeout as sleep } from "node:timers/promises";
import type { MapMeta } from "../../../core/index.js";
import { seededRandom } from "../../../testkit/kv-standin.js";
import type { PusherProcess } from "../../../testkit/pusher-process.js";
import { COUNTRIES } from "../../../testkit/sample-countries.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { names, scenarioEtcd, seedWorld, testClient } from "../support/etcd-world.js";
import { randomRule } from "../support/intent-writer.js";
import { firstRevRegression, startRecordedKv } from "../support/kv-recorder.js";
import { startScenarioPusher } from "../support/pusher-process.js";

const TTL_S = 3;

export const leadership: Scenario = {
  id: 6,
  title: "Leadership",
  invariant:
    "2, then 3 pushers; the leader is kill -9'd: takeover within the election TTL + 2 s; never two writers (each KV write carries its writer's id and a rev no lower than the last)",
  budgetMs: (q) => (q ? 120_000 : 300_000),
  async run(ctx) {
    const kills = ctx.quick ? 3 : 10;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const etcd = await scenarioEtcd(ctx);
    const client = testClient(ctx, etcd.endpoint);
    const { prefix, electionKey } = names("lead");
    await seedWorld(client, prefix, 10);
    const kv = await startRecordedKv(ctx);
    let serial = 0;
    const spawn = () =>
      startScenarioPusher(ctx, {
        id: `lead-${++serial}`,
        etcdEndpoint: etcd.endpoint,
        prefix,
        electionKey,
        electionTtl: TTL_S,
        kvEnv: kv.env(),
      });
    const alive: PusherProcess[] = [await spawn(), await spawn()];
    await Promise.all(alive.map((p) => p.ready()));

    let churning = true;
    const churn = (async () => {
      while (churning) {
        const cc = COUNTRIES[Math.floor(r() * 10)] ?? "DE";
        await client
          .put(`${prefix}country/${cc}`)
          .value(randomRule(r))
          .exec()
          .catch(() => undefined);
        await sleep(300);
      }
    })();

    const metaWrites = () =>
      kv.writes
        .filter((w) => w.key === "meta")
        .map((w) => ({ at: w.at, meta: JSON.parse(w.value) as MapMeta }));
    const takeovers: number[] = [];
    const killed = new Set<string>();
    for (let k = 0; k < kills; k++) {
      if (k === Math.floor(kills / 2)) {
        const third = await spawn();
        await third.ready();
        alive.push(third);
      }
      // The current leader: the only one whose /status says so, and the author of the last write.
      let leader: PusherProcess | undefined;
      const deadline = Date.now() + 20_000;
      while (!leader && Date.now() < deadline) {
        const roles = await Promise.all(alive.map(async (p) => ({ p, s: await p.status() })));
        const leaders = roles.filter((x) => x.s?.role === "leader");
        const last = metaWrites().at(-1);
        if (leaders.length === 1 && last?.meta.pusher === leaders[0]?.p.id) leader = leaders[0]?.p;
        else await sleep(200);
      }
      if (!leader) throw new Error(`no single leader among ${alive.map((p) => p.id).join(", ")}`);
      const tKill = Date.now();
      await leader.proc.kill9();
      killed.add(leader.id);
      alive.splice(alive.indexOf(leader), 1);
      // The replacement starts while the takeover happens (it joins as a standby).
      const replacement = spawn().then(async (p) => {
        await p.ready();
        return p;
      });
      let took: number | null = null;
      while (Date.now() - tKill < 30_000) {
        const next = metaWrites().find((w) => w.at > tKill && w.meta.pusher !== leader.id);
        if (next) {
          took = next.at - tKill;
          break;
        }
        await sleep(25);
      }
      inv.check(
        took !== null && took <= TTL_S * 1000 + 2000,
        `takeover slower than TTL ${TTL_S} s + 2 s`,
        () => `kill ${k + 1}: ${took === null ? "no takeover in 30 s" : secs(took)}`,
      );
      takeovers.push(took ?? 30_000);
      alive.push(await replacement);
      ctx.progress(
        `kill ${k + 1}/${kills} (${alive.length} pushers): takeover in ${took === null ? "never" : secs(took)}`,
      );
    }
    churning = false;
    await churn;
    await Promise.all(alive.map((p) => p.metrics()));

    // Never two writers: one writer per segment, a segment per takeover, and revs never go back.
    const metas = metaWrites();
    let lastRev = -1;
    const writers: string[] = [];
    for (const { meta } of metas) {
      inv.check(
        typeof meta.pusher === "string" && meta.pusher.length > 0,
        "KV write without a writer id",
        () => JSON.stringify(meta).slice(0, 80),
      );
      inv.check(
        meta.rev >= lastRev,
        "KV write with a lower rev than the previous one",
        () => `${meta.pusher} wrote rev ${meta.rev} after ${lastRev}`,
      );
      lastRev = Math.max(lastRev, meta.rev);
      if (writers.at(-1) !== meta.pusher) {
        inv.check(
          !writers.includes(meta.pusher),
          "two writers interleaved",
          () => `${meta.pusher} wrote again after ${writers.at(-1)}`,
        );
        writers.push(meta.pusher);
      }
    }
    inv.check(
      writers.length === kills + 1,
      "writer changes ≠ takeovers",
      () => `${writers.length - 1} changes for ${kills} kills: ${writers.join(" → ")}`,
    );
    inv.check(
      writers.slice(0, -1).every((w) => killed.has(w)),
      "a live standby wrote",
      () => writers.join(" → "),
    );
    const regression = firstRevRegression(kv.writes);
    inv.check(regression === null, "routes rev went backwards", () => regression ?? "");
    const sorted = [...takeovers].sort((a, b) => a - b);
    return {
      runs: kills,
      figure: `${kills} leader kills (2 then 3 pushers), takeover median ${secs(sorted[Math.floor(sorted.length / 2)] ?? 0)} max ${secs(sorted.at(-1) ?? 0)} (limit ${TTL_S + 2} s), ${metas.length} KV writes by ${writers.length} writers in ${writers.length} segments, rev regressions ${inv.count("KV write with a lower rev than the previous one")}`,
      failures: inv.failures(),
    };
  },
};
