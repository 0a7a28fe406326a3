import { expect } from "vitest";
import { bucketIndex, TTFB_BUCKETS_MS } from "../../core/index.js";
import { endCanary } from "../../edgectl/apply/canary-end.js";
import { cliSettingsFromEnv } from "../../edgectl/cli/cli-settings.js";
import { EtcdMembers } from "../../edgectl/etcd/etcd-members.js";
import { CanaryJudge, type CanaryJudgeEvent } from "../../observer/canary-judge.js";
import { type MinuteCounts, type MinuteReading, rowKey } from "../../observer/minute-reading.js";
import { applyAll, auditScope, markHealthy } from "../edgectl/audit-support.js";
import { type CliSuite, exampleState, runCli } from "../edgectl/cli-harness.js";

/** A judge of `prefix` (real etcd), ending canaries through edgectl's commit, at clock `now`. */
export function judge(env: Record<string, string>, name: string, now: () => number) {
  const settings = cliSettingsFromEnv({ ...env, EDGECTL_USER: name });
  const members = EtcdMembers.open(settings);
  const events: CanaryJudgeEvent[] = [];
  const j = new CanaryJudge({
    members,
    canaryKey: `${settings.prefix}canary/current`,
    judgementKey: `${settings.prefix}canary/judgement`,
    ttlSeconds: 5,
    judge: name,
    end: (how, id, reason) => endCanary(members, settings, how, reason, id, () => undefined),
    log: (e) => events.push(e),
    now,
  });
  return {
    j,
    events,
    close: async () => {
      await j.revoke();
      members.close();
    },
  };
}

/** Both sides of canary `id` in DE this minute: `n` requests each, at the given times. */
export function reading(id: string, nowMs: number, canaryMs: number, stableMs: number, n = 300) {
  const minute = Math.floor(nowMs / 60_000);
  const row = (pool: string, side: string, ms: number): MinuteCounts => {
    const ttfb = new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0);
    ttfb[bucketIndex(TTFB_BUCKETS_MS, ms)] = n;
    return {
      country: "DE",
      pool,
      side,
      requests: n,
      outcomes: { ok: n },
      starved: 0,
      failovers: 0,
      ttfb,
      ttfbSumMs: n * ms,
    };
  };
  const rows = [row("ams-1", `${id}:canary`, canaryMs), row("fra-1", `${id}:stable`, stableMs)];
  return {
    minute,
    buckets: new Map([[minute, new Map(rows.map((r) => [rowKey(r.country, r.pool, r.side), r]))]]),
  } satisfies MinuteReading;
}

export async function canaryRunning(suite: CliSuite, tag: string, forS: string) {
  const scope = auditScope(suite, tag);
  await markHealthy(suite.client, scope.prefix, ["fra-1", "ams-1", "par-1"]);
  await applyAll(suite, scope.env, [exampleState()]);
  const r = await runCli(
    ["move", "DE", "--to", "ams-1", "--canary", "10", "--for", forS, "--yes"],
    { env: scope.env },
  );
  expect(r.code, r.stderr).toBe(0);
  const text = await suite.client.get(`${scope.prefix}canary/current`).string();
  return { ...scope, id: (JSON.parse(text ?? "{}") as { id: string }).id };
}
