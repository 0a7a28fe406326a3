import type { CompiledMap } from "../../core/contract/compiled-map.js";
import { observeAccess } from "../observe/observe-access.js";
import { plainResponse } from "../plain-response.js";
import { cacheKeyUrl, marketSegment } from "./cache-key.js";
import type { CacheSettings } from "./cache-settings.js";
import type { CacheStore } from "./cache-store.js";

/** Why `POST /__edge/purge` refused a request. */
export type PurgeErrorCode = "bad-body" | "bad-url" | "too-many-urls";

/** The most URLs one purge request may name. */
export const PURGE_MAX_URLS = 100;

/** The largest purge body read, in bytes. */
const PURGE_MAX_BODY = 64 * 1024;

const NO_STORE = { "Cache-Control": "no-store" } as const;

function failure(status: number, error: PurgeErrorCode, detail: string): Response {
  return Response.json({ error, detail }, { status, headers: NO_STORE });
}

/** Every market segment the map's routes key on, and the no-market one. */
function marketsOf(map: CompiledMap | null): string[] {
  const all = new Set<string>([marketSegment(undefined)]);
  if (map) {
    all.add(marketSegment(map.default.attrs));
    for (const r of Object.values(map.countries)) all.add(marketSegment(r.attrs));
  }
  return [...all];
}

function urlsOf(body: unknown): string[] | null {
  if (typeof body !== "object" || body === null) return null;
  const urls = (body as { urls?: unknown }).urls;
  if (!Array.isArray(urls) || !urls.every((u) => typeof u === "string")) return null;
  return urls as string[];
}

/**
 * `POST /__edge/purge` (bearer `PURGE_TOKEN`; 404 when unset or wrong, so the path reveals
 * nothing): removes each named public URL's copies, for every market of the current map, from
 * **this location's** cache only. The Cache API is per location; a purge reaches the location
 * that answers it (docs/caching.md).
 */
export async function purgeRoute(
  request: Request,
  settings: CacheSettings,
  store: CacheStore,
  map: CompiledMap | null,
): Promise<Response> {
  const token = settings.purgeToken;
  if (token === null || !observeAccess(request.headers.get("authorization"), token)) {
    return plainResponse(404, "Not Found");
  }
  if (request.method !== "POST") return plainResponse(405, "Method Not Allowed");
  const text = await request.text();
  if (text.length > PURGE_MAX_BODY) return failure(400, "bad-body", "body over 64 KiB");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return failure(400, "bad-body", 'body is not JSON: send {"urls": ["https://…"]}');
  }
  const urls = urlsOf(body);
  if (urls === null) return failure(400, "bad-body", '"urls" must be a list of strings');
  if (urls.length > PURGE_MAX_URLS) {
    return failure(400, "too-many-urls", `at most ${PURGE_MAX_URLS} URLs per request`);
  }
  const markets = marketsOf(map);
  const results: { url: string; removed: number }[] = [];
  for (const [i, url] of urls.entries()) {
    if (!/^https?:\/\//i.test(url) || cacheKeyUrl(url, settings.ignoreParams, "-") === null) {
      return failure(400, "bad-url", `urls[${i}] is not an absolute http(s) URL`);
    }
  }
  for (const url of urls) {
    const keys = markets.map((m) => cacheKeyUrl(url, settings.ignoreParams, m) ?? "");
    const gone = await Promise.all(keys.map((k) => store.delete(k).catch(() => false)));
    results.push({ url, removed: gone.filter(Boolean).length });
  }
  const colo = (request as Request & { cf?: { colo?: unknown } }).cf?.colo;
  return Response.json(
    { purged: results, location: typeof colo === "string" ? colo : null },
    { headers: NO_STORE },
  );
}
