import { describe, expect, it } from "vitest";
import { compile, DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../../core/index.js";
import { evaluateSync, formatSync, type SyncInputs } from "../../edgectl/status/sync-status.js";

const P = "/p/";

describe("evaluateSync", () => {
  const opts = {
    carried: null,
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

  it("is in sync when routes last changed at an older revision and meta confirms the newest (docs/reference.md §3)", () => {
    // etcd moved to 31 (a checker's p90 within the watermarks, say) without changing routing
    const routes = compile({ ...snapshot, revision: 12 }, { ...opts, now: new Date(5_000) }).map;
    const x: SyncInputs = {
      etcd: { revision: 31, epoch: 4, newestChange: 31, compiled },
      kv: { meta: { ...meta, rev: 31 }, routes },
      pusher: { ok: true, role: "leader", pushedRevision: 31, epoch: 4 },
    };
    expect(routes.rev).toBe(12);
    expect(evaluateSync(x)).toEqual({ inSync: true, behind: [] });
    expect(formatSync(x, evaluateSync(x)).find((l) => l.startsWith("KV routes"))).toContain(
      "routing last changed",
    );
    // a shed's fall clock alone is no difference either; its share is
    const shed = { share: 40, at: "2026-11-29T15:00:00.000Z" };
    const falling = { ...shed, below_since: "2026-11-29T15:00:30.000Z" };
    const kvShed = { ...routes, sheds: { "a-1": shed } };
    const sync = (c: typeof compiled) =>
      evaluateSync({ ...x, etcd: { ...x.etcd, compiled: c }, kv: { ...x.kv, routes: kvShed } });
    expect(sync({ ...compiled, sheds: { "a-1": falling } }).inSync).toBe(true);
    expect(sync({ ...compiled, sheds: { "a-1": { ...shed, share: 30 } } }).inSync).toBe(false);
    // meta short of the newest change is behind, whatever routes says
    expect(evaluateSync({ ...x, kv: { ...x.kv, meta: { ...meta, rev: 30 } } }).inSync).toBe(false);
  });
});
