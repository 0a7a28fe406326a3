import { describe, expect, it } from "vitest";
import { compile, DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../../core/index.js";
import { evaluateSync, type SyncInputs } from "../../edgectl/status/sync-status.js";

const P = "/p/";

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
