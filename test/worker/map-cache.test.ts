import { describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { createMapCache, type RoutesReader } from "../../worker/map-cache.js";
import { buildMap } from "../cases/routing-cases.js";

const SPEC = { default: { chain: ["ams-1"], source: "country/_default" } };
const mapText = (rev: number, compiledAt?: string) =>
  serializeMap({
    ...buildMap(SPEC, { rev, originOf: (p) => `https://${p}.example.com` }),
    ...(compiledAt ? { compiled_at: compiledAt } : {}),
  });

/** A KVNamespace-like stub: each `get` answers with the current behaviour. */
function stubKv(initial: () => Promise<string | null>) {
  let behaviour = initial;
  const calls: { key: string; cacheTtl: number }[] = [];
  const kv: RoutesReader = {
    get(key, options) {
      calls.push({ key, cacheTtl: options.cacheTtl });
      return behaviour();
    },
  };
  return {
    kv,
    calls,
    set(b: () => Promise<string | null>) {
      behaviour = b;
    },
  };
}

function manualClock() {
  let now = 1_000_000;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

const SETTINGS = { isolateCacheMs: 5000, kvCacheTtl: 60 };
const throwing = () => Promise.reject(new Error("KV unavailable"));

describe("map cache", () => {
  it("reads routes with cacheTtl once, then serves the parsed map while fresh", async () => {
    const clock = manualClock();
    const stub = stubKv(async () => mapText(5));
    const cache = createMapCache({ clock: clock.now });
    const first = await cache.current(stub.kv, SETTINGS);
    expect(first.map?.rev).toBe(5);
    expect(first.stale).toBe(false);
    expect(stub.calls).toEqual([{ key: "routes", cacheTtl: 60 }]);

    stub.set(async () => mapText(6));
    clock.advance(4999);
    const fresh = cache.current(stub.kv, SETTINGS);
    // Fresh: answered synchronously, no KV read, no parse.
    expect(fresh).toBe(first);
    expect(stub.calls).toHaveLength(1);

    clock.advance(1);
    expect((await cache.current(stub.kv, SETTINGS)).map?.rev).toBe(6);
    expect(stub.calls).toHaveLength(2);
  });

  it("re-reads on every call when isolateCacheMs is 0", async () => {
    const stub = stubKv(async () => mapText(1));
    const cache = createMapCache({ clock: () => 42 });
    for (let i = 0; i < 3; i++) await cache.current(stub.kv, { ...SETTINGS, isolateCacheMs: 0 });
    expect(stub.calls).toHaveLength(3);
  });

  it("shares one KV read among concurrent callers (single-flight)", async () => {
    let release: (text: string) => void = () => undefined;
    const stub = stubKv(() => new Promise((resolve) => (release = resolve)));
    const cache = createMapCache({ clock: () => 0 });
    const waiting = [1, 2, 3, 4].map(() => cache.current(stub.kv, SETTINGS));
    expect(stub.calls).toHaveLength(1);
    release(mapText(9));
    const results = await Promise.all(waiting);
    expect(results.map((r) => r.map?.rev)).toEqual([9, 9, 9, 9]);
  });

  it("keeps the last good map and marks it stale when KV throws", async () => {
    const clock = manualClock();
    const stub = stubKv(async () => mapText(3));
    const cache = createMapCache({ clock: clock.now });
    await cache.current(stub.kv, SETTINGS);

    stub.set(throwing);
    clock.advance(SETTINGS.isolateCacheMs);
    const snap = await cache.current(stub.kv, SETTINGS);
    expect(snap.map?.rev).toBe(3);
    expect(snap.stale).toBe(true);

    // A failed read still counts as a check: KV is not hammered while it is down.
    const again = cache.current(stub.kv, SETTINGS);
    expect(again).toBe(snap);
    expect(stub.calls).toHaveLength(2);

    stub.set(async () => mapText(4));
    clock.advance(SETTINGS.isolateCacheMs);
    const recovered = await cache.current(stub.kv, SETTINGS);
    expect(recovered.map?.rev).toBe(4);
    expect(recovered.stale).toBe(false);
  });

  it("has no map (not a stale one) when KV throws on a cold isolate", async () => {
    const stub = stubKv(throwing);
    const cache = createMapCache({ clock: () => 0 });
    const snap = await cache.current(stub.kv, SETTINGS);
    expect(snap).toEqual({ map: null, stale: false });
  });

  it.each([
    ["malformed JSON", async () => '{"v":1,'],
    ["a deleted key", async () => null],
    ["an older revision", async () => mapText(2)],
  ])("keeps the last good map on %s", async (_name, next) => {
    const clock = manualClock();
    const stub = stubKv(async () => mapText(10));
    const cache = createMapCache({ clock: clock.now });
    await cache.current(stub.kv, SETTINGS);
    stub.set(next);
    clock.advance(SETTINGS.isolateCacheMs);
    const snap = await cache.current(stub.kv, SETTINGS);
    expect(snap.map?.rev).toBe(10);
    expect(snap.stale).toBe(true);
  });

  it.each([
    ["compiled before the held map (a stale KV copy)", "2025-12-31T23:00:00.000Z", 10],
    ["compiled just after it (inside the margin)", "2026-01-01T00:01:00.000Z", 10],
    ["compiled well after it (etcd replaced or restored)", "2026-01-01T03:00:00.000Z", 2],
  ])("a lower revision %s: serves rev %s", async (_name, compiledAt, want) => {
    const clock = manualClock();
    const stub = stubKv(async () => mapText(10)); // compiled 2026-01-01T00:00:00Z
    const cache = createMapCache({ clock: clock.now });
    await cache.current(stub.kv, SETTINGS);
    stub.set(async () => mapText(2, compiledAt));
    clock.advance(SETTINGS.isolateCacheMs);
    const snap = await cache.current(stub.kv, SETTINGS);
    expect(snap.map?.rev).toBe(want);
    expect(snap.stale).toBe(want === 10);
  });

  it("accepts the same revision again without going stale", async () => {
    const clock = manualClock();
    const stub = stubKv(async () => mapText(10));
    const cache = createMapCache({ clock: clock.now });
    const first = await cache.current(stub.kv, SETTINGS);
    clock.advance(SETTINGS.isolateCacheMs);
    const second = await cache.current(stub.kv, SETTINGS);
    expect(second.stale).toBe(false);
    expect(second.map).toBe(first.map);
  });
});
