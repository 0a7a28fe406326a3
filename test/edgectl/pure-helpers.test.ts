import { describe, expect, it } from "vitest";
import { ConfigError } from "../../adapters/errors.js";
import { compile, DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../../core/index.js";
import { commitFailure } from "../../edgectl/apply/commit-failure.js";
import { settleBudgetMs } from "../../edgectl/apply/commit-under-lock.js";
import { diffIntent } from "../../edgectl/apply/plan-diff.js";
import { cliSettingsFromEnv } from "../../edgectl/cli/cli-settings.js";
import { memberTimeouts } from "../../edgectl/etcd/etcd-members.js";
import type { PrefixRead } from "../../edgectl/etcd/read-prefix.js";
import { StatusHysteresis } from "../../edgectl/heartbeat/status-hysteresis.js";
import { evaluateSync, type SyncInputs } from "../../edgectl/status/sync-status.js";

const P = "/p/";

function read(entries: Record<string, string>, revision = 10): PrefixRead {
  return {
    revision,
    entries: Object.entries(entries).map(([rel, v], i) => ({
      key: `${P}${rel}`,
      rel,
      value: Buffer.from(v),
      createRevision: i + 1,
      modRevision: i + 1,
      lease: "0",
    })),
  };
}

describe("StatusHysteresis", () => {
  it("needs 3 consecutive failures to go unhealthy and 2 consecutive successes to come back", () => {
    const h = new StatusHysteresis("healthy");
    expect([false, false, true, false, false].map((ok) => h.record(ok))).toEqual(
      Array(5).fill("healthy"),
    );
    expect(h.record(false)).toBe("unhealthy");
    expect(h.record(true)).toBe("unhealthy");
    expect(h.record(false)).toBe("unhealthy");
    expect(h.record(true)).toBe("unhealthy");
    expect(h.record(true)).toBe("healthy");
  });
});

describe("diffIntent", () => {
  const desired = {
    pools: { "a-1": { origin: "https://a.example.com" } },
    countries: { _default: { primary: "a-1", fallbacks: [] } },
  };

  it("ignores key order in stored JSON and never touches overrides, health, epoch or the lock", () => {
    const r = read({
      "pool/a-1": '{"origin":"https://a.example.com"}',
      "country/_default": '{"fallbacks":[],"primary":"a-1"}',
      "override/DE": "{}",
      "health/a-1": "{}",
      epoch: "3",
      "lock/apply": "x",
    });
    expect(diffIntent(r, desired, P)).toEqual([]);
  });

  it("removes intent keys the file does not name, including invalid ones", () => {
    const r = read({
      "pool/a-1": '{"origin":"https://a.example.com"}',
      "country/_default": "{broken",
      "country/ZZ": "{}",
      "pool/b-1": '{"origin":"https://b.example.com"}',
    });
    expect(diffIntent(r, desired, P).map((c) => `${c.kind} ${c.rel}`)).toEqual([
      "remove country/ZZ",
      "change country/_default",
      "remove pool/b-1",
    ]);
  });
});

describe("evaluateSync", () => {
  const opts = {
    prefix: P,
    floorPool: DEFAULT_FLOOR_POOL,
    originTemplate: DEFAULT_ORIGIN_TEMPLATE,
    now: new Date(0),
  };
  const snapshot = {
    revision: 20,
    entries: [
      { key: `${P}pool/a-1`, value: '{"origin":"https://a.example.com"}' },
      { key: `${P}country/_default`, value: '{"primary":"a-1","fallbacks":[]}' },
      { key: `${P}epoch`, value: "4" },
    ],
  };
  const compiled = compile(snapshot, opts).map;
  const meta = {
    v: 1 as const,
    rev: 20,
    epoch: 4,
    heartbeat_at: "2026-11-29T15:01:00.000Z",
    pusher: "p",
    countries: 0,
    problems: [],
  };
  const base: SyncInputs = {
    etcd: { revision: 22, epoch: 4, newestChange: 20, compiled },
    kv: { meta, routes: compiled },
    pusher: { ok: true, role: "leader", pushedRevision: 20, epoch: 4 },
  };

  it("is in sync when KV carries the epoch, a revision at or after the newest change, and the same routing", () => {
    expect(evaluateSync(base)).toEqual({ inSync: true, behind: [] });
  });

  it("is behind when meta's heartbeat is older than the dead-man's limit", () => {
    const at = Date.parse(meta.heartbeat_at);
    expect(evaluateSync({ ...base, deadman: { now: at + 1_000, maxAgeMs: 5_000 } }).inSync).toBe(
      true,
    );
    const late = evaluateSync({ ...base, deadman: { now: at + 6_000, maxAgeMs: 5_000 } });
    expect(late.inSync).toBe(false);
    expect(late.behind[0]).toContain("is the pusher running?");
  });

  it("is behind when the epoch, revision, routing or the pusher lag, or the pusher is unreachable", () => {
    expect(
      evaluateSync({ ...base, kv: { meta: { ...meta, epoch: 3 }, routes: compiled } }).inSync,
    ).toBe(false);
    expect(
      evaluateSync({ ...base, kv: { meta: { ...meta, rev: 19 }, routes: compiled } }).inSync,
    ).toBe(false);
    const other = compile({ ...snapshot, entries: snapshot.entries.slice(1) }, opts).map;
    expect(evaluateSync({ ...base, kv: { meta, routes: other } }).inSync).toBe(false);
    expect(
      evaluateSync({ ...base, pusher: { ok: true, role: "leader", pushedRevision: 19, epoch: 4 } })
        .inSync,
    ).toBe(false);
    expect(evaluateSync({ ...base, pusher: { ok: false, error: "refused" } }).inSync).toBe(false);
    // a standby pusher's pushed revision is not the edge's
    expect(
      evaluateSync({
        ...base,
        pusher: { ok: true, role: "standby", pushedRevision: null, epoch: null },
      }).inSync,
    ).toBe(true);
  });
});

describe("cliSettingsFromEnv", () => {
  it("reads the routing settings the pusher reads, --prefix winning over ROUTING_PREFIX", () => {
    const env = { ROUTING_PREFIX: "/a/", FLOOR_POOL: "ams-1", ORIGIN_TEMPLATE: "https://{pool}.x" };
    expect(cliSettingsFromEnv(env)).toMatchObject({
      prefix: "/a/",
      floorPool: "ams-1",
      originTemplate: "https://{pool}.x",
    });
    expect(cliSettingsFromEnv(env, { prefix: "/b/" }).prefix).toBe("/b/");
    const both = { ETCD_ENDPOINTS: "10.0.0.1:2379" };
    expect(cliSettingsFromEnv(both).etcd.endpoints).toEqual(["http://10.0.0.1:2379"]);
    expect(
      cliSettingsFromEnv(both, { endpoints: "10.0.0.2:2379, https://10.0.0.3:2379" }).etcd
        .endpoints,
    ).toEqual(["http://10.0.0.2:2379", "https://10.0.0.3:2379"]);
    expect(() => cliSettingsFromEnv(both, { endpoints: " , " })).toThrow("--endpoints: is empty");
    expect(cliSettingsFromEnv({})).toMatchObject({
      floorPool: DEFAULT_FLOOR_POOL,
      originTemplate: DEFAULT_ORIGIN_TEMPLATE,
      lockTtlSeconds: 30,
    });
  });

  it.each([
    ["ROUTING_PREFIX", "/no-slash"],
    ["FLOOR_POOL", "Par_1"],
    ["ORIGIN_TEMPLATE", "{pool}.origin.example.com"],
    ["EDGECTL_LOCK_TTL", "0"],
    ["EDGECTL_MAX_TXN_OPS", "many"],
  ])("rejects %s=%s naming the variable", (name, value) => {
    const run = () => cliSettingsFromEnv({ [name]: value });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(name);
  });
});

describe("commit failures and timeouts", () => {
  it("maps each unapplied commit to its exit code: 2 conflict, 4 proven not written, 5 unknown", () => {
    const f = (reason: "epoch-moved" | "lock-lost" | "not-landed" | "unknown") =>
      commitFailure({ ok: false, reason, epochNow: "7" }, 6);
    expect(f("epoch-moved").exitCode).toBe(2);
    expect(f("epoch-moved").message).toContain("epoch moved from 6 to 7");
    expect(f("lock-lost").exitCode).toBe(2);
    expect(f("not-landed").exitCode).toBe(4);
    expect(f("not-landed").message).toContain("nothing was written");
    expect(f("unknown").exitCode).toBe(5);
    expect(f("unknown").message).toContain("run plan");
  });

  it("gives one member at most 2 s and the cluster twice the request deadline; settles for 3", () => {
    expect(memberTimeouts(5000)).toEqual({ attemptMs: 2000, budgetMs: 10_000 });
    expect(memberTimeouts(1000)).toEqual({ attemptMs: 1000, budgetMs: 2000 });
    expect(settleBudgetMs(5000)).toBe(15_000);
    expect(settleBudgetMs(500)).toBe(3000);
  });
});
