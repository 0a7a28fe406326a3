import type { Route } from "../../core/contract/compiled-map.js";
import type { WaitUntil } from "../map-cache.js";
import type { ProxyOutcome } from "../proxy.js";
import { type CachedCopy, copyState, readCopy, storedCopy } from "./cache-entry.js";
import { cacheKeyUrl, marketSegment } from "./cache-key.js";
import { cachePolicy } from "./cache-policy.js";
import type { CacheSettings } from "./cache-settings.js";
import type { CacheStore } from "./cache-store.js";
import { Collapser } from "./collapse.js";
import { HitForPass } from "./hit-for-pass.js";
import { varyMatches, varyValues } from "./vary-values.js";

/** `X-Edge-Cache`: where a proxied response came from. */
export type CacheStatus = "HIT" | "MISS" | "BYPASS" | "STALE";

/** A proxied response and where it came from. */
export interface CachedOutcome {
  readonly outcome: ProxyOutcome;
  readonly status: CacheStatus;
}

/** What one viewer request brings to the cache. */
export interface CacheRequest {
  readonly request: Request;
  readonly route: Route;
  readonly country: string;
  readonly settings: CacheSettings;
  /** How long collapsed requests wait at most for the one fetching their key. */
  readonly originTimeoutMs: number;
  readonly background: WaitUntil | undefined;
}

/**
 * The longest a cache lookup may take before the request goes to the origins without it. The
 * Cache API answers in single-digit milliseconds; a cache that is slower than this is failing,
 * and the origins answer instead.
 */
export const CACHE_LOOKUP_BUDGET_MS = 200;

/** A lookup within the budget; a slow or failing cache is a miss, never a failed request. */
async function lookup(
  store: CacheStore,
  key: string,
  range: string | null,
): Promise<Response | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), CACHE_LOOKUP_BUDGET_MS);
  });
  try {
    return await Promise.race([store.match(key, range).catch(() => undefined), late]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

function discard(copy: CachedCopy | null): void {
  copy?.response.body?.cancel().catch(() => {});
}

/** The copy under `key` when it is there, for this request's `Vary` values. */
async function copyFor(
  store: CacheStore,
  key: string,
  c: CacheRequest,
  range: string | null,
): Promise<CachedCopy | null> {
  const stored = await lookup(store, key, range);
  if (stored === undefined) return null;
  const copy = readCopy(stored, Date.now());
  if (copy === null || !varyMatches(copy.meta.vary, c.request.headers, c.country)) {
    stored.body?.cancel().catch(() => {});
    return null;
  }
  return copy;
}

function served(copy: CachedCopy, route: Route, status: CacheStatus): CachedOutcome {
  return {
    outcome: {
      response: copy.response,
      link: { pool: route.pool, origin: route.origin },
      tried: [route.pool],
    },
    status,
  };
}

/**
 * The edge cache of one isolate: the location's Cache API (`store`) keyed on what the viewer
 * asked for (`cacheKeyUrl`: public URL less `CACHE_IGNORE_PARAMS`, plus the route's market
 * attributes, never the pool), with request collapsing and stale-if-error.
 */
export class EdgeCache {
  readonly #store: CacheStore;
  readonly #collapser = new Collapser();
  readonly #pass = new HitForPass();

  constructor(store: CacheStore) {
    this.#store = store;
  }

  /** The store, for the purge endpoint. */
  get store(): CacheStore {
    return this.#store;
  }

  /**
   * Answers `c.request` from the cache when a fresh copy is there (`HIT`), else from the origins
   * through `proxy` (`MISS`), keeping a cacheable answer (`cachePolicy`) for the next viewer;
   * when every pool fails, a stale copy within its stale-if-error window (`STALE`). A request
   * that is not a `GET`, carries `Authorization`, arrives with `CACHE="off"`, or asks for a URL
   * whose last answer could not be kept (`HitForPass`) goes straight to the origins (`BYPASS`).
   * A `Range` request is answered from a stored whole object; on a miss it goes to the origins
   * as it is, and its `206` is not kept.
   */
  async proxy(c: CacheRequest, proxy: () => Promise<ProxyOutcome>): Promise<CachedOutcome> {
    const request = c.request;
    if (!c.settings.on || request.method !== "GET" || request.headers.has("authorization")) {
      return { outcome: await proxy(), status: "BYPASS" };
    }
    const market = marketSegment(c.route.attrs);
    // Checked before the key is built: traffic the cache cannot serve pays a map lookup only.
    const passKey = `${market} ${request.url}`;
    if (this.#pass.has(passKey)) return { outcome: await proxy(), status: "BYPASS" };
    const key = cacheKeyUrl(request.url, c.settings.ignoreParams, market);
    if (key === null) return { outcome: await proxy(), status: "BYPASS" };
    const range = request.headers.get("range");

    let copy = await copyFor(this.#store, key, c, range);
    if (copy !== null && copyState(copy.meta, Date.now()) === "fresh") {
      return served(copy, c.route, "HIT");
    }
    let release: (() => void) | null = null;
    if (range === null) {
      release = this.#collapser.lead(key, c.originTimeoutMs);
      if (release === null) {
        await this.#collapser.wait(key);
        const after = await copyFor(this.#store, key, c, range);
        if (after !== null && copyState(after.meta, Date.now()) === "fresh") {
          discard(copy);
          return served(after, c.route, "HIT");
        }
        discard(after);
      }
    }
    try {
      const outcome = await proxy();
      if (outcome.response.status >= 500 && copy !== null) {
        if (copyState(copy.meta, Date.now()) === "stale") {
          outcome.response.body?.cancel().catch(() => {});
          const stale = copy;
          copy = null;
          return served(stale, c.route, "STALE");
        }
      }
      if (range !== null) return { outcome, status: "MISS" };
      const kept = this.#keep(key, passKey, c, outcome, release);
      release = null;
      return { outcome: kept, status: "MISS" };
    } finally {
      discard(copy);
      release?.();
    }
  }

  /**
   * Stores a cacheable origin answer in the background and returns the outcome whose body the
   * viewer reads (one branch of the body; the other goes to the cache). `release` is called once
   * the copy is stored or known not to be.
   */
  #keep(
    key: string,
    passKey: string,
    c: CacheRequest,
    outcome: ProxyOutcome,
    release: (() => void) | null,
  ): ProxyOutcome {
    const response = outcome.response;
    const policy = cachePolicy(response.status, response.headers, c.settings.staleIfErrorS);
    const vary = policy.storable ? varyValues(policy.vary, c.request.headers, c.country) : null;
    if (!policy.storable || vary === null || response.body === null) {
      release?.();
      // A failing origin is not a verdict on the URL: the next request may find it cacheable.
      if (response.status < 500) this.#pass.mark(passKey);
      return outcome;
    }
    this.#pass.forget(passKey);
    const [forViewer, forCache] = response.body.tee();
    const copy = storedCopy(response, forCache, {
      storedAt: Date.now(),
      freshS: policy.freshS,
      staleIfErrorS: policy.staleIfErrorS,
      vary,
    });
    const stored = this.#store
      .put(key, copy)
      .catch(() => {})
      .finally(() => release?.());
    c.background?.waitUntil(stored);
    const viewer = new Response(forViewer, response);
    return { ...outcome, response: viewer };
  }
}
