import { type CompiledMap, parseMap } from "../core/index.js";

/** The part of a `KVNamespace` the cache uses (a stub in Node tests). */
export interface RoutesReader {
  get(key: string, options: { type: "text"; cacheTtl: number }): Promise<string | null>;
}

/** What the isolate knows about the map. */
export interface MapSnapshot {
  /** The last good map, or `null` when none was ever read. */
  readonly map: CompiledMap | null;
  /** True when the last read failed, was malformed or older than `map`: `map` is last known good. */
  readonly stale: boolean;
}

/** How `MapCache.current` reads. */
export interface MapReadSettings {
  /** Milliseconds a map stays fresh in the isolate; 0 re-reads every time. */
  readonly isolateCacheMs: number;
  /** `cacheTtl` passed to KV, in seconds. */
  readonly kvCacheTtl: number;
}

/** An isolate-level cache of the parsed `routes` document. */
export interface MapCache {
  /**
   * The current snapshot: synchronous while fresh, else one shared KV read (single-flight).
   * `ctx` (the request's execution context) keeps that read alive through `waitUntil` if the
   * request that started it goes away while other requests wait on it.
   */
  current(
    kv: RoutesReader,
    settings: MapReadSettings,
    ctx?: WaitUntil,
  ): MapSnapshot | Promise<MapSnapshot>;
}

/** The part of an `ExecutionContext` the cache uses. */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/** Dependencies of `createMapCache`. */
export interface MapCacheDeps {
  /** Milliseconds; `Date.now` by default. */
  readonly clock?: () => number;
}

/**
 * How much later a lower-revision map must be compiled to be taken as a new etcd history. KV
 * serves a replaced document for up to ~60 s, and pushers' clocks may differ a little.
 */
export const NEW_HISTORY_MARGIN_MS = 120_000;

function isNewHistory(next: CompiledMap, held: CompiledMap): boolean {
  const a = Date.parse(next.compiled_at);
  const b = Date.parse(held.compiled_at);
  return Number.isFinite(a) && Number.isFinite(b) && a > b + NEW_HISTORY_MARGIN_MS;
}

/** The KV key that holds the compiled map (SPEC §3). */
export const ROUTES_KEY = "routes";

const EMPTY: MapSnapshot = { map: null, stale: false };

/** Creates a map cache; the Worker keeps one per isolate. */
export function createMapCache(deps: MapCacheDeps = {}): MapCache {
  const clock = deps.clock ?? Date.now;
  let held: MapSnapshot = EMPTY;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let inflight: Promise<MapSnapshot> | null = null;
  let heldText: string | null = null;

  function settle(next: MapSnapshot): MapSnapshot {
    if (next.map !== held.map || next.stale !== held.stale) held = next;
    checkedAt = clock();
    return held;
  }

  function keepLastGood(): MapSnapshot {
    // With nothing held there is nothing to be stale about: the caller routes to the floor.
    return settle(held.map ? { map: held.map, stale: true } : EMPTY);
  }

  async function refresh(kv: RoutesReader, settings: MapReadSettings): Promise<MapSnapshot> {
    let text: string | null;
    try {
      text = await kv.get(ROUTES_KEY, { type: "text", cacheTtl: settings.kvCacheTtl });
    } catch {
      return keepLastGood();
    }
    if (text === null) return keepLastGood();
    if (text === heldText && held.map) return settle({ map: held.map, stale: false });
    const map = parseMap(text);
    if (!map) return keepLastGood();
    // KV is eventually consistent: another location may still serve an older document.
    // A warm isolate never goes back to a revision older than one it already served, unless the
    // lower revision was compiled well after the held one: etcd was replaced or restored, and
    // its revisions started again (a stale copy is always compiled before the map it trails).
    if (held.map && map.rev < held.map.rev && !isNewHistory(map, held.map)) return keepLastGood();
    heldText = text;
    return settle({ map, stale: false });
  }

  return {
    current(kv, settings, ctx) {
      if (clock() - checkedAt < settings.isolateCacheMs) return held;
      if (inflight) return inflight;
      const read = refresh(kv, settings).finally(() => {
        inflight = null;
      });
      inflight = read;
      ctx?.waitUntil(read);
      return read;
    },
  };
}
