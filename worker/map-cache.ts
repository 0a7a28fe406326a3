import type { CompiledMap } from "../core/contract/compiled-map.js";
import { ROUTES_KEY } from "../core/contract/kv-keys.js";
import { judgeMapText, type MapVerdict } from "./map-order.js";

/** The part of a `KVNamespace` the cache uses (a stub in Node tests). */
export interface RoutesReader {
  get(key: string, options: { type: "text"; cacheTtl: number }): Promise<string | null>;
}

/** What the isolate knows about the map. */
export interface HeldMap {
  /** The last good map, or `null` when none was ever read. */
  readonly map: CompiledMap | null;
  /**
   * True when the last read failed, timed out, was malformed or older than `map`: `map` is
   * last known good. An expired map whose refresh is still under way is not stale.
   */
  readonly stale: boolean;
}

/** How `MapCache.current` reads. */
export interface MapReadSettings {
  /** Milliseconds a map stays fresh in the isolate; 0 starts a refresh on every request. */
  readonly isolateCacheMs: number;
  /** `cacheTtl` passed to KV, in seconds. */
  readonly kvCacheTtl: number;
}

/** The part of an `ExecutionContext` the cache uses. */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/** An isolate-level cache of the parsed `routes` document (stale-while-revalidate). */
export interface MapCache {
  /**
   * The map held now. Synchronous whenever the isolate has read KV before: an expired map
   * is served as it is while one background read (single-flight, kept alive by
   * `ctx.waitUntil`) refreshes it. Only a cold isolate's first read is waited for, and for at
   * most `READ_BUDGET_MS`; then the request goes on without a map (`no-map`).
   */
  current(kv: RoutesReader, settings: MapReadSettings, ctx?: WaitUntil): HeldMap | Promise<HeldMap>;
}

/** Dependencies of `createMapCache`. */
export interface MapCacheDeps {
  /** Milliseconds; `Date.now` by default. */
  readonly clock?: () => number;
  /** Runs `fn` after `ms` and returns a cancel function; `setTimeout` by default. */
  readonly schedule?: (ms: number, fn: () => void) => () => void;
}

/**
 * How long one read of `routes` may take: the longest a cold isolate's first request waits,
 * and the age at which a read that has not answered counts as failed (`stale-map` on a held
 * map). Workers KV answers a hot key in single-digit milliseconds and a cold one in tens to
 * a few hundred; 1.5 s is far beyond a healthy read and well inside a viewer's patience.
 */
export const READ_BUDGET_MS = 1_500;

/**
 * How long a read that never answered keeps its single-flight slot: only after this may
 * another read start, so a hanging KV costs one pending read per 5 s, not one per request.
 */
export const READ_RETRY_MS = 5_000;

const EMPTY: HeldMap = { map: null, stale: false };

type ReadResult = MapVerdict | { readonly kind: "same" } | { readonly kind: "failed" };

interface Read {
  readonly seq: number;
  readonly startedAt: number;
  settled: boolean;
  timedOut: boolean;
}

function defaultSchedule(ms: number, fn: () => void): () => void {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
}

/** Creates a map cache; the Worker keeps one per isolate. */
export function createMapCache(deps: MapCacheDeps = {}): MapCache {
  const clock = deps.clock ?? Date.now;
  const schedule = deps.schedule ?? defaultSchedule;
  let held: HeldMap = EMPTY;
  let heldText: string | null = null;
  /** When the last read answered or ran out of budget; the isolate cache counts from here. */
  let checkedAt = Number.NEGATIVE_INFINITY;
  let pending: Read | null = null;
  let seq = 0;
  /** The newest read (by start) whose answer was applied. */
  let appliedSeq = 0;
  /** The first read's wait, shared by every request of a cold isolate; then `null` forever. */
  let coldWait: Promise<HeldMap> | null = null;

  function hold(map: CompiledMap | null, stale: boolean): void {
    // With nothing held there is nothing to be stale about: the caller routes to the floor.
    const next = map ? { map, stale } : EMPTY;
    if (next.map !== held.map || next.stale !== held.stale) held = next;
  }

  async function readOnce(kv: RoutesReader, settings: MapReadSettings): Promise<ReadResult> {
    let text: string | null;
    try {
      text = await kv.get(ROUTES_KEY, { type: "text", cacheTtl: settings.kvCacheTtl });
    } catch {
      return { kind: "failed" };
    }
    if (text === null) return { kind: "failed" };
    if (text === heldText && held.map) return { kind: "same" };
    const verdict = judgeMapText(text, held.map);
    if (verdict.kind === "newer") heldText = text;
    return verdict;
  }

  function apply(read: Read, result: ReadResult): void {
    read.settled = true;
    if (pending === read) pending = null;
    // A newer map is always taken: the (history, rev) order already keeps out stale copies.
    if (result.kind === "newer") {
      appliedSeq = Math.max(appliedSeq, read.seq);
      checkedAt = clock();
      hold(result.map, false);
      return;
    }
    // Anything else from a read overtaken by a later one says nothing about KV now.
    if (read.seq < appliedSeq) return;
    // A timed-out read's failure was counted when it timed out; a late "same" clears it.
    if (read.timedOut && result.kind !== "same") return;
    appliedSeq = read.seq;
    checkedAt = clock();
    hold(held.map, result.kind !== "same");
  }

  function timeOut(read: Read): void {
    if (read.settled) return;
    read.timedOut = true;
    checkedAt = clock();
    hold(held.map, true);
  }

  function startRead(kv: RoutesReader, settings: MapReadSettings, ctx?: WaitUntil): void {
    seq += 1;
    const read: Read = { seq, startedAt: clock(), settled: false, timedOut: false };
    pending = read;
    let expire: () => void = () => undefined;
    const budget = new Promise<void>((resolve) => {
      const cancel = schedule(READ_BUDGET_MS, () => {
        timeOut(read);
        resolve();
      });
      expire = () => {
        cancel();
        resolve();
      };
    });
    const answered = readOnce(kv, settings).then((result) => {
      expire();
      apply(read, result);
    });
    // Keeps a slow read alive past the response that started it (the platform caps this).
    ctx?.waitUntil(answered);
    if (read.seq === 1) {
      coldWait = Promise.race([answered, budget]).then(() => {
        coldWait = null;
        return held;
      });
    }
  }

  return {
    current(kv, settings, ctx) {
      const now = clock();
      const due = now - checkedAt >= settings.isolateCacheMs;
      if (due && (pending === null || now - pending.startedAt >= READ_RETRY_MS)) {
        startRead(kv, settings, ctx);
      }
      return coldWait ?? held;
    },
  };
}
