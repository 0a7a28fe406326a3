import { setTimeout as sleep } from "node:timers/promises";
import { type Canary, onCanarySide } from "../../../core/index.js";
import { describeMismatch, waitConverged } from "../../../testkit/map-oracle.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import {
  canaryDisagreement,
  judgeCanaryHistory,
  type PrefixState,
  prefixHistory,
} from "../support/canary-history.js";
import {
  BR_BEFORE,
  CANARY_VIEWERS,
  type CanaryWorld,
  canaryWorld,
  waitFor,
} from "../support/canary-world.js";
import { expectedMapOf } from "../support/cluster-world.js";
import { edgectlBinary } from "../support/edgectl.js";

/** The canary's share of BR's viewers, and the promise on how many reach the slow shard. */
const SHARE = 10;
const MIN_SAMPLES = 20;
const FOR_S = 8;
/** A promote's audit reason: `… gates hold: … (canary N requests, stable M, in …)`. */
const HELD = /gates hold: .*\(canary (\d+) requests, stable (\d+), in /;

/** Starts a canary moving BR to `to`; its `canary/current`. */
async function startCanary(
  ctx: Parameters<Scenario["run"]>[0],
  w: CanaryWorld,
  to: string,
  extra: readonly string[],
): Promise<Canary> {
  const r = await edgectlBinary(
    ctx,
    ["move", "BR", "--to", to, "--canary", String(SHARE), ...extra, "--yes"],
    w.env,
  );
  if (r.code !== 0) throw new Error(`move --canary exited ${r.code}: ${r.stderr.trim()}`);
  const canary = await w.canaryNow();
  if (!canary) throw new Error("move --canary wrote no canary/current");
  return canary;
}

export const canaryUnderKills: Scenario = {
  id: 23,
  title: "a canary under pusher and etcd kills",
  invariant:
    "3-member etcd, two pushers, the Worker in workerd, edgectl observe and BR's viewers; a canary to a shard answering in 4 s and then one to a healthy shard, the leader pusher and the etcd leader kill -9'd and restarted during each: at every revision of etcd's history and every sample, canary/current and the intent agree (the stable intent is the old one, or exactly the promoted canary's); the slow canary is rolled back after a failing judgement and only its share of viewers reach it; the healthy one is promoted only after a passing judgement with --min-samples a side, --for after it began passing, the figures in the audit record",
  budgetMs: (q) => (q ? 150_000 : 240_000),
  async run(ctx) {
    const inv = new Invariants();
    const w = await canaryWorld(ctx);
    const rounds = ctx.quick ? 1 : 2;
    const notes: string[] = [];

    // Samples of etcd, each one range read at one revision, for the whole run.
    let sampling = true;
    let samples = 0;
    let promoted: string | null = null;
    const sampler = (async () => {
      while (sampling) {
        const state: PrefixState | null = await w.mc
          .any(async (c) => {
            const res = await c.getAll().prefix(w.prefix).exec();
            return new Map(
              res.kvs.map((kv) => [
                kv.key.toString("utf8").slice(w.prefix.length),
                kv.value.toString("utf8"),
              ]),
            );
          }, 3_000)
          .catch(() => null);
        if (state) {
          samples++;
          const d = canaryDisagreement(state);
          inv.check(
            d === null,
            "a sample saw canary/current and the intent disagree",
            () => d ?? "",
          );
          const br = state.get("country/BR");
          inv.check(
            state.has("canary/current") || br === BR_BEFORE || br === promoted,
            "a sample saw BR's stable rule neither the old one nor the promoted one",
            () => br ?? "(absent)",
          );
        }
        await sleep(200);
      }
    })();
    ctx.defer(async () => {
      sampling = false;
      await sampler;
    });

    let pusherKills = 0;
    let memberKills = 0;
    /** kill -9 of the leader pusher and an etcd member (the leader first), then both restarted. */
    const killRound = async (k: number) => {
      // after a kill the survivor leads once the dead one's election lease (3 s) runs out
      const deadline = Date.now() + 15_000;
      let p = await w.leader();
      while (p === null && Date.now() < deadline) {
        await sleep(200);
        p = await w.leader();
      }
      const leaderMember = await w.cluster.waitLeader();
      const member = k % 2 === 0 ? leaderMember : (leaderMember + 1) % 3;
      if (p !== null) {
        await w.killPusher(p);
        pusherKills++;
      }
      await w.cluster.kill(member);
      memberKills++;
      await sleep(1_500);
      await w.cluster.restart(member);
      if (p !== null) await w.restartPusher(p);
      ctx.progress(
        `killed pusher ${p === null ? "(no leader)" : `canary-${p + 1}`} and etcd m${member}${member === leaderMember ? " (leader)" : ""}; both back`,
      );
    };
    /** Waits until `canary/current` is gone, killing meanwhile; the ms from `t0`. */
    const untilEnded = async (t0: number, timeoutMs: number) => {
      for (let k = 0; k < rounds; k++) {
        if (!(await w.canaryNow())) break;
        await killRound(k);
      }
      await waitFor("the canary ended", timeoutMs, async () => (await w.canaryNow()) === null);
      return Date.now() - t0;
    };

    // The seeds' incident as a canary: BR to a shard answering in 4 s.
    const t1 = Date.now();
    const bad = await startCanary(ctx, w, "gru-slow", [
      "--for",
      "10m",
      "--min-samples",
      String(MIN_SAMPLES),
    ]);
    ctx.progress(`canary ${bad.id}: BR to gru-slow for ${SHARE} % of its viewers`);
    const badMs = await untilEnded(t1, 90_000);
    ctx.progress(`canary ${bad.id} ended after ${secs(badMs)}`);

    // A healthy move as a canary. Under kills on a loaded 2-core machine a few of its 20-odd
    // requests may take a second (a hedge to fra-1 answers them): the gate allows for that; the
    // slow canary's own gates are the defaults.
    const t2 = Date.now();
    const good = await startCanary(ctx, w, "gru-2", [
      "--for",
      `${FOR_S}s`,
      "--min-samples",
      String(MIN_SAMPLES),
      "--gate",
      "p90<=x1.5+1000ms",
    ]);
    const goodAfter = good.changes.find((c) => c.key === "country/BR")?.after ?? null;
    promoted = goodAfter;
    ctx.progress(`canary ${good.id}: BR to gru-2 for ${SHARE} % of its viewers`);
    const goodMs = await untilEnded(t2, 90_000);
    ctx.progress(`canary ${good.id} ended after ${secs(goodMs)}`);

    // KV holds what etcd compiles to: BR on gru-2 for every viewer.
    const expected = await expectedMapOf(w.mc, w.prefix);
    inv.check(
      (await waitConverged(() => w.kv.routes(), expected, 20_000)) !== null,
      "KV ≠ compile(etcd) after the run",
      () => describeMismatch(w.kv.routes(), expected),
    );
    sampling = false;
    await sampler;

    // etcd's own history, revision by revision.
    const root = w.prefix.slice(0, w.prefix.indexOf("routing/"));
    const { initial, revisions } = await prefixHistory(w.mc, root, w.prefix, w.startRev);
    const history = judgeCanaryHistory(initial, revisions);
    for (const v of history.violations) inv.check(false, "etcd's history is half-applied", () => v);
    const records = await w.records();
    const endOf = (c: Canary) => history.ends.find((e) => e.canary.id === c.id);
    const recordAt = (rev: number) => records.find((r) => r.rev === rev)?.record;

    const badEnd = endOf(bad);
    inv.check(badEnd?.how === "ended", "the slow canary was not rolled back", () =>
      JSON.stringify(badEnd ?? "never ended"),
    );
    const badRecord = badEnd ? recordAt(badEnd.rev) : undefined;
    inv.check(
      badRecord?.command === "canary-rollback" &&
        /^rolled back by its judge: gate failed: /.test(badRecord.reason ?? ""),
      "the slow canary's end is not its judge's rollback with the figures",
      () => JSON.stringify(badRecord ?? null),
    );
    inv.check(
      badEnd?.judgement?.verdict === "failing",
      "the slow canary ended without a failing judgement before it",
      () => JSON.stringify(badEnd?.judgement ?? null),
    );

    for (const end of history.ends.filter((e) => e.how === "promote")) {
      const j = end.judgement;
      const min = end.canary.gates.min_samples;
      inv.check(
        j?.verdict === "passing" && j.canary.samples >= min && j.stable.samples >= min,
        "promoted without a passing judgement of --min-samples a side",
        () => `${end.canary.id} at rev ${end.rev}: ${JSON.stringify(j)}`,
      );
      const rec = recordAt(end.rev);
      const held = HELD.exec(rec?.reason ?? "");
      inv.check(
        rec?.command === "canary-promote" &&
          held !== null &&
          Number(held[1]) >= min &&
          Number(held[2]) >= min,
        "a promote's audit record does not show the judgement's figures",
        () => JSON.stringify(rec ?? null),
      );
      const since = j?.passing_since ? Date.parse(j.passing_since) : Number.NaN;
      inv.check(
        rec !== undefined && Date.parse(rec.at) - since >= end.canary.for_s * 1000,
        "promoted before the gates had held for --for",
        () => `${end.canary.id}: passing since ${j?.passing_since}, committed ${rec?.at}`,
      );
    }
    const goodEnd = endOf(good);
    inv.check(goodEnd?.how === "promote", "the healthy canary was not promoted", () =>
      JSON.stringify(goodEnd ?? "never ended"),
    );
    const brNow = await w.mc.any((c) => c.get(`${w.prefix}country/BR`).string());
    inv.check(brNow === goodAfter, "BR's rule is not the promoted canary's", () => brNow ?? "");

    // The slow shard heard only viewers the slow canary's hash draws.
    const drawn = new Set(CANARY_VIEWERS.filter((ip) => onCanarySide(bad, ip)));
    const reached = new Set(
      w.origins.get("gru-slow").requests.map((r) => String(r.headers["x-forwarded-for"])),
    );
    for (const ip of reached)
      inv.check(drawn.has(ip), "a viewer off the slow canary's share reached gru-slow", () => ip);
    inv.check(
      (100 * drawn.size) / CANARY_VIEWERS.length <= SHARE + 2,
      "the canary's hash draws more than its share + 2 points",
      () => `${drawn.size} of ${CANARY_VIEWERS.length}`,
    );
    for (const [i, p] of w.pushers().entries())
      inv.check(
        p.proc.alive(),
        "a pusher exited",
        () => `canary-${i + 1}: ${p.proc.output().slice(-300)}`,
      );
    inv.check(w.observer().alive(), "the observer exited", () => w.observer().output().slice(-300));

    notes.push(
      `${bad.id} (gru-slow): ${badEnd?.judgement?.detail ?? "no judgement"}`,
      `${good.id} (gru-2): ${goodEnd?.judgement?.detail ?? "no judgement"}`,
    );
    return {
      runs: pusherKills + memberKills,
      figure: `${pusherKills} leader-pusher and ${memberKills} etcd-member kill -9; slow canary ${badEnd?.how === "ended" ? "rolled back" : "PROMOTED"} after ${secs(badMs)}, healthy one ${goodEnd?.how === "promote" ? "promoted" : "NOT promoted"} after ${secs(goodMs)}; ${history.checked} revisions and ${samples} samples checked; ${reached.size} of ${w.seen.size} BR viewers reached the slow shard (drawn ${drawn.size})`,
      failures: inv.failures(),
      notes,
    };
  },
};
