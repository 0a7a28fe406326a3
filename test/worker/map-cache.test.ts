import { describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import {
  createMapCache,
  type HeldMap,
  READ_BUDGET_MS,
  READ_RETRY_MS,
  type RoutesReader,
} from "../../worker/map-cache.js";
import { buildMap } from "../cases/routing-cases.js";

const BASE_MAP = { default: { chain: ["ams-1"], source: "country/_default" } };
const mapText = (rev: number, history = 0, compiledAt?: string) =>
  serializeMap({
    ...buildMap(BASE_MAP, { rev, originOf: (p) => `https://${p}.example.com` }),
    history,
    ...(compiledAt ? { compiled_at: compiledAt } : {}),
  });

interface PendingRead {
  resolve(text: string | null): void;
  reject(err: Error): void;
}

/** A KV stub whose reads stay pending until the test answers them, in order. */
function manualKv() {
  const reads: PendingRead[] = [];
  const kv: RoutesReader = {
    get(key, options) {
      expect(key).toBe("routes");
      expect(options).toEqual({ type: "text", cacheTtl: 60 });
      return new Promise((resolve, reject) => reads.push({ resolve, reject }));
    },
  };
  return {
    kv,
    reads,
    /** Answers read `i` and lets the cache apply it. */
    async answer(i: number, text: string | null) {
      reads[i]?.resolve(text);
      await flush();
    },
    async fail(i: number) {
      reads[i]?.reject(new Error("KV unavailable"));
      await flush();
    },
  };
}

/** A clock and a timer queue the test moves by hand. */
function manualTime() {
  let now = 1_000_000;
  let timers: { at: number; fn: () => void }[] = [];
  return {
    clock: () => now,
    schedule(ms: number, fn: () => void) {
      const t = { at: now + ms, fn };
      timers.push(t);
      return () => {
        timers = timers.filter((x) => x !== t);
      };
    },
    async advance(ms: number) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
      await flush();
    },
    get timers() {
      return timers.length;
    },
  };
}

const flush = () => new Promise<void>((r) => setImmediate(r));
const SETTINGS = { isolateCacheMs: 5000, kvCacheTtl: 60 };
const waits: Promise<unknown>[] = [];
const ctx = { waitUntil: (p: Promise<unknown>) => void waits.push(p) };

function setup(settings = SETTINGS) {
  const time = manualTime();
  const kv = manualKv();
  const cache = createMapCache({ clock: time.clock, schedule: time.schedule });
  const current = () => cache.current(kv.kv, settings, ctx);
  /** A warm isolate answers synchronously: anything else is a request waiting on KV. */
  const now = (): HeldMap => {
    const snap = current();
    if (snap instanceof Promise) throw new Error("the request waited on KV");
    return snap;
  };
  return { time, kv, cache, current, now };
}

/** A cache that has read map `text` on its cold start. */
async function warmed(text: string, settings = SETTINGS) {
  const s = setup(settings);
  const first = s.current();
  await s.kv.answer(0, text);
  await first;
  return s;
}

describe("map cache: a cold isolate", () => {
  it("waits for its first read and shares it among concurrent requests", async () => {
    const s = setup();
    const waiting = [s.current(), s.current(), s.current()];
    expect(waiting.every((w) => w instanceof Promise)).toBe(true);
    expect(s.kv.reads).toHaveLength(1);
    await s.kv.answer(0, mapText(9));
    const results = await Promise.all(waiting);
    expect(results.map((r) => r.map?.rev)).toEqual([9, 9, 9]);
    expect(results[0]?.stale).toBe(false);
    // The budget's timer was cancelled: nothing is left pending.
    expect(s.time.timers).toBe(0);
  });

  it(`gives up after READ_BUDGET_MS (${READ_BUDGET_MS} ms): no map, never a stale one`, async () => {
    const s = setup();
    const first = s.current();
    let settled: HeldMap | null = null;
    void Promise.resolve(first).then((v) => {
      settled = v;
    });
    await s.time.advance(READ_BUDGET_MS - 1);
    expect(settled).toBeNull();
    await s.time.advance(1);
    expect(settled).toEqual({ map: null, stale: false });
    // Later requests never wait again, even while that read still hangs.
    expect(s.now()).toEqual({ map: null, stale: false });
  });

  it("takes the late answer of a first read that ran out of budget", async () => {
    const s = setup();
    void s.current();
    await s.time.advance(READ_BUDGET_MS);
    expect(s.now().map).toBeNull();
    await s.kv.answer(0, mapText(4));
    expect(s.now()).toMatchObject({ map: { rev: 4 }, stale: false });
  });

  it.each([
    ["KV throws", (s: ReturnType<typeof setup>) => s.kv.fail(0)],
    ["the key is missing", (s: ReturnType<typeof setup>) => s.kv.answer(0, null)],
    ["the document is malformed", (s: ReturnType<typeof setup>) => s.kv.answer(0, '{"v":1,')],
  ])("has no map when %s, and retries in the background after the isolate cache", async (_n, f) => {
    const s = setup();
    const first = s.current();
    await f(s);
    expect(await first).toEqual({ map: null, stale: false });
    expect(s.now().map).toBeNull();
    expect(s.kv.reads).toHaveLength(1);
    await s.time.advance(SETTINGS.isolateCacheMs);
    expect(s.now().map).toBeNull();
    expect(s.kv.reads).toHaveLength(2);
    await s.kv.answer(1, mapText(3));
    expect(s.now().map?.rev).toBe(3);
  });
});

describe("map cache: a warm isolate never waits on KV", () => {
  it("serves the fresh map without reading KV", async () => {
    const s = await warmed(mapText(5));
    await s.time.advance(SETTINGS.isolateCacheMs - 1);
    expect(s.now().map?.rev).toBe(5);
    expect(s.kv.reads).toHaveLength(1);
  });

  it("serves an expired map at once and refreshes it once in the background", async () => {
    const s = await warmed(mapText(5));
    await s.time.advance(SETTINGS.isolateCacheMs);
    const waitsBefore = waits.length;
    for (let i = 0; i < 5; i++) expect(s.now()).toMatchObject({ map: { rev: 5 }, stale: false });
    expect(s.kv.reads).toHaveLength(2);
    expect(waits.length).toBe(waitsBefore + 1);
    await s.kv.answer(1, mapText(6));
    expect(s.now()).toMatchObject({ map: { rev: 6 }, stale: false });
  });

  it("refreshes on every request with isolateCacheMs 0, one read at a time", async () => {
    const s = await warmed(mapText(1), { ...SETTINGS, isolateCacheMs: 0 });
    s.now();
    s.now();
    expect(s.kv.reads).toHaveLength(2);
    await s.kv.answer(1, mapText(2));
    expect(s.now().map?.rev).toBe(2);
    expect(s.kv.reads).toHaveLength(3);
  });

  it("marks the map stale when a refresh runs out of budget, and clears it on its answer", async () => {
    const s = await warmed(mapText(7));
    await s.time.advance(SETTINGS.isolateCacheMs);
    s.now();
    await s.time.advance(READ_BUDGET_MS - 1);
    expect(s.now().stale).toBe(false);
    await s.time.advance(1);
    expect(s.now()).toMatchObject({ map: { rev: 7 }, stale: true });
    await s.kv.answer(1, mapText(7));
    expect(s.now()).toMatchObject({ map: { rev: 7 }, stale: false });
  });

  it(`a hanging read holds its slot for READ_RETRY_MS (${READ_RETRY_MS} ms), then another starts`, async () => {
    const s = await warmed(mapText(7), { ...SETTINGS, isolateCacheMs: 0 });
    s.now();
    await s.time.advance(READ_BUDGET_MS);
    for (let i = 0; i < 50; i++) expect(s.now()).toMatchObject({ map: { rev: 7 }, stale: true });
    expect(s.kv.reads).toHaveLength(2);
    await s.time.advance(READ_RETRY_MS - READ_BUDGET_MS);
    s.now();
    expect(s.kv.reads).toHaveLength(3);
    await s.kv.answer(2, mapText(8));
    expect(s.now()).toMatchObject({ map: { rev: 8 }, stale: false });
    // The first hung read answers at last with what was current then: it changes nothing.
    await s.kv.answer(1, null);
    expect(s.now()).toMatchObject({ map: { rev: 8 }, stale: false });
  });

  it("keeps the last good map and marks it stale when KV throws, without hammering KV", async () => {
    const s = await warmed(mapText(3));
    await s.time.advance(SETTINGS.isolateCacheMs);
    s.now();
    await s.kv.fail(1);
    expect(s.now()).toMatchObject({ map: { rev: 3 }, stale: true });
    expect(s.kv.reads).toHaveLength(2);
    await s.time.advance(SETTINGS.isolateCacheMs);
    s.now();
    await s.kv.answer(2, mapText(4));
    expect(s.now()).toMatchObject({ map: { rev: 4 }, stale: false });
  });

  it.each([
    ["malformed JSON", '{"v":1,'],
    ["a deleted key", null],
    ["an older revision", mapText(2)],
    ["an older history with a higher revision", mapText(900, 0)],
  ])("keeps the last good map on %s", async (_name, next) => {
    const s = await warmed(mapText(10, 1));
    await s.time.advance(SETTINGS.isolateCacheMs);
    s.now();
    await s.kv.answer(1, next);
    expect(s.now()).toMatchObject({ map: { rev: 10, history: 1 }, stale: true });
  });

  it("accepts the same document again without parsing or going stale", async () => {
    const text = mapText(10);
    const s = await warmed(text);
    const held = s.now().map;
    await s.time.advance(SETTINGS.isolateCacheMs);
    s.now();
    await s.kv.answer(1, text);
    expect(s.now().map).toBe(held);
    expect(s.now().stale).toBe(false);
  });
});

describe("map cache: histories", () => {
  it.each([
    ["a higher history with a much lower revision", 3, 2, 3, 2],
    ["a higher history compiled earlier (clocks are not trusted)", 5, 4, 5, 4],
    ["the same history, lower revision (a stale KV copy)", 9, 1, 50, 1],
    ["a lower history, higher revision (a stale copy of the old etcd)", 90, 0, 50, 1],
    ["the same history, same revision", 50, 1, 50, 1],
  ])("held (rev 50, history 1), then %s", async (_n, rev, history, wantRev, wantHistory) => {
    const s = await warmed(mapText(50, 1, "2026-01-01T01:00:00.000Z"));
    await s.time.advance(SETTINGS.isolateCacheMs);
    s.now();
    await s.kv.answer(1, mapText(rev, history, "2026-01-01T00:00:00.000Z"));
    expect(s.now().map).toMatchObject({ rev: wantRev, history: wantHistory });
  });

  it("a map without a history field is history 0", async () => {
    const legacy = JSON.parse(mapText(5)) as Record<string, unknown>;
    delete legacy.history;
    const s = await warmed(JSON.stringify(legacy));
    expect(s.now().map).toMatchObject({ rev: 5, history: 0 });
    await s.time.advance(SETTINGS.isolateCacheMs);
    s.now();
    await s.kv.answer(1, mapText(1, 1));
    expect(s.now().map).toMatchObject({ rev: 1, history: 1 });
  });
});
