import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { describeMismatch, expectedMap, waitConverged } from "../../../testkit/map-oracle.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { names, scenarioEtcd, seedWorld, testClient } from "../support/etcd-world.js";
import { IntentWriter } from "../support/intent-writer.js";
import { firstRevRegression, startRecordedKv } from "../support/kv-recorder.js";
import { startScenarioPusher } from "../support/pusher-process.js";

const WINDOW_MS = 5 * 60_000;
const ACCOUNT_LIMIT = 1_200;
const RETRY_AFTER_S = 2;

/** Most requests in any sliding 5-minute window of the log. */
function peakWindow(times: readonly number[]): number {
  let peak = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while ((times[hi] ?? 0) - (times[lo] ?? 0) >= WINDOW_MS) lo += 1;
    peak = Math.max(peak, hi - lo + 1);
  }
  return peak;
}

export const kvFaults: Scenario = {
  id: 4,
  title: "KV API faults",
  invariant:
    "30% of KV API calls fail (429+Retry-After, 500, hangs, unsuccessful_keys): converges, 0 lost updates, request budget kept; /healthz 503 while it cannot write >30 s, 200 after",
  budgetMs: (q) => (q ? 180_000 : 300_000),
  async run(ctx) {
    const rounds = ctx.quick ? 4 : 25;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const etcd = await scenarioEtcd(ctx);
    const client = testClient(ctx, etcd.endpoint);
    const { prefix, electionKey } = names("kvfault");
    await seedWorld(client, prefix, 10);
    // A leaky upstream too: error bodies echo the Authorization header; the pusher must scrub it.
    const kv = await startRecordedKv(ctx, {
      perKeyWriteLimit: "429",
      seed: ctx.seed,
      echoAuthorizationInErrors: true,
      faults: { ratio: 0.3, retryAfterSeconds: RETRY_AFTER_S },
    });
    const pusher = await startScenarioPusher(ctx, {
      id: "kvfault-1",
      etcdEndpoint: etcd.endpoint,
      prefix,
      electionKey,
      electionTtl: 5,
      kvEnv: kv.env(),
    });
    await pusher.ready();
    const writer = new IntentWriter(client, prefix, r);

    // Phase 1: rounds of changes under 30% failures; each round's final state must arrive.
    let delivered = 0;
    let slowest = 0;
    for (let i = 0; i < rounds; i++) {
      const n = 1 + Math.floor(r() * 5);
      for (let k = 0; k < n; k++) await writer.write();
      const expected = await expectedMap(client, prefix);
      const took = await waitConverged(() => kv.routes(), expected, 90_000);
      if (
        inv.check(
          took !== null,
          "lost update (round's final state never reached KV)",
          () => `round ${i + 1}: ${describeMismatch(kv.routes(), expected)}`,
        )
      ) {
        delivered += 1;
        slowest = Math.max(slowest, took ?? 0);
      }
      if (i % 5 === 4) {
        await pusher.status();
        ctx.progress(`${i + 1}/${rounds} rounds delivered ${delivered}, slowest ${secs(slowest)}`);
      }
    }
    const faultsSeen = kv.standin.requests.filter((q) => q.fault).length;

    // Phase 2: KV refuses everything for longer than 30 s, then heals. It starts from a clean
    // slate: a failure streak left over from phase 1 (say `meta` refused while `routes` landed)
    // would make /healthz turn 503 before the outage's own 30 s.
    kv.standin.setFaults(undefined);
    const settledAt = Date.now();
    let settled = false;
    while (!settled && Date.now() - settledAt < 60_000) {
      const s = await pusher.status();
      settled = s?.kv_ok === true && s.lag_seconds === 0;
      if (!settled) await sleep(250);
    }
    inv.check(settled, "pusher never settled after phase 1 (kv_ok, no lag)", () => "60 s");
    kv.standin.setFaults({
      ratio: 1,
      weights: { "server-error": 2, "rate-limited": 1, "unsuccessful-keys": 1 },
      retryAfterSeconds: RETRY_AFTER_S,
    });
    const outageStart = Date.now();
    await writer.write();
    let first503: number | null = null;
    let early503 = false;
    while (Date.now() - outageStart < 45_000) {
      const code = await pusher.healthz();
      const t = Date.now() - outageStart;
      if (code === 503) {
        first503 ??= t;
        if (t < 29_000) early503 = true;
        if (t >= 29_000) break;
      }
      await sleep(500);
    }
    inv.check(
      first503 !== null,
      "/healthz never turned 503 during a >30 s KV outage",
      () => `${secs(Date.now() - outageStart)} of outage`,
    );
    inv.check(
      !early503,
      "/healthz turned 503 before 30 s of failures",
      () => `at ${secs(first503 ?? 0)}`,
    );
    kv.standin.setFaults(undefined);
    const healedAt = Date.now();
    const expected = await expectedMap(client, prefix);
    const back = await waitConverged(() => kv.routes(), expected, 60_000);
    inv.check(
      back !== null,
      "lost update (the outage's change never reached KV after healing)",
      () => describeMismatch(kv.routes(), expected),
    );
    let ok200: number | null = null;
    while (Date.now() - healedAt < 60_000) {
      if ((await pusher.healthz()) === 200) {
        ok200 = Date.now() - healedAt;
        break;
      }
      await sleep(250);
    }
    inv.check(
      ok200 !== null,
      "/healthz not back to 200 within 60 s after KV healed",
      () => "still 503",
    );

    // Budget and Retry-After, from the stand-in's request log.
    const reqs = kv.standin.requests;
    const peak = peakWindow(reqs.map((q) => q.at));
    inv.check(
      peak <= ACCOUNT_LIMIT,
      "request budget exceeded",
      () => `${peak} requests in 5 minutes`,
    );
    let honoured = 0;
    let limited = 0;
    for (const [i, q] of reqs.entries()) {
      const next = reqs[i + 1];
      if (q.status !== 429 || !next) continue;
      limited += 1;
      const gap = next.at - q.at;
      // Injected 429s say Retry-After: 2; the stand-in's own per-key limit says 1.
      const wanted = q.fault === "rate-limited" ? RETRY_AFTER_S * 1000 : 1000;
      if (
        inv.check(
          gap >= wanted - 100,
          "Retry-After not honoured",
          () => `next request ${gap} ms after a 429 with Retry-After: ${wanted / 1000}`,
        )
      )
        honoured += 1;
    }
    const regression = firstRevRegression(kv.writes);
    inv.check(regression === null, "rev in KV went backwards", () => regression ?? "");
    await pusher.metrics();
    await pusher.status();
    return {
      runs: rounds,
      figure: `${reqs.length} KV calls, ${faultsSeen} injected faults in phase 1; ${delivered}/${rounds} rounds delivered (slowest ${secs(slowest)}); 503 at ${first503 === null ? "never" : secs(first503)} of outage, 200 again ${ok200 === null ? "never" : secs(ok200)} after healing; peak ${peak}/${ACCOUNT_LIMIT} per 5 min; Retry-After kept ${honoured}/${limited}`,
      failures: inv.failures(),
    };
  },
};
