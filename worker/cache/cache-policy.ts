/** Why a response or request is not kept in the edge cache. */
export type UncacheableReason =
  | "status"
  | "set-cookie"
  | "private"
  | "no-store"
  | "no-cache"
  | "no-freshness"
  | "vary-star";

/** What the cache may do with an origin's response. */
export type CachePolicy =
  | { readonly storable: false; readonly reason: UncacheableReason }
  | {
      readonly storable: true;
      /** Seconds the response is fresh for, counted from when the origin sent it. */
      readonly freshS: number;
      /** Seconds past freshness a copy may stand in when every pool fails. */
      readonly staleIfErrorS: number;
      /** The request header names the response varies on (lower case). */
      readonly vary: readonly string[];
    };

/**
 * The freshness fields in the order a CDN obeys them (RFC 9213; Cloudflare's docs): the first
 * one present with a lifetime decides how long the copy is fresh.
 */
export const FRESHNESS_FIELDS = [
  "cloudflare-cdn-cache-control",
  "cdn-cache-control",
  "cache-control",
] as const;

/** One field's directives, names lower case; a directive without a value maps to `""`. */
export function parseDirectives(value: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /([^\s,=;]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^,\s;]*))?/g;
  for (const m of value.matchAll(re)) {
    const name = (m[1] ?? "").toLowerCase();
    if (out.has(name)) continue;
    const raw = m[2] ?? "";
    out.set(name, raw.startsWith('"') ? raw.slice(1, -1) : raw);
  }
  return out;
}

function seconds(raw: string | undefined): number | null {
  if (raw === undefined || !/^\d{1,10}$/.test(raw)) return null;
  return Number(raw);
}

/**
 * Whether an origin's `200` can be kept, and for how long. The first freshness field present
 * governs (`Cloudflare-CDN-Cache-Control`, then `CDN-Cache-Control`, then `Cache-Control`, as
 * RFC 9213 and Cloudflare read them), so `Cache-Control: no-store` beside
 * `CDN-Cache-Control: max-age=60` is kept by the edge and not by browsers. Never kept: anything
 * but a `200`, a response with `Set-Cookie` or `Vary: *`, `private` in any field, `no-store` or
 * `no-cache` in the governing one, or no explicit lifetime there (`s-maxage`, `max-age`; without
 * any field, `Expires` against `Date`): a lifetime is never guessed. `Age` counts against it.
 * `must-revalidate` or `proxy-revalidate` without `stale-if-error` allows no stale copy, whatever
 * the setting says.
 */
export function cachePolicy(status: number, headers: Headers, staleIfErrorS: number): CachePolicy {
  if (status !== 200) return { storable: false, reason: "status" };
  if (headers.has("set-cookie")) return { storable: false, reason: "set-cookie" };
  const varyRaw = headers.get("vary");
  const vary = varyRaw
    ? varyRaw
        .split(",")
        .map((v) => v.trim().toLowerCase())
        .filter((v) => v.length > 0)
    : [];
  if (vary.includes("*")) return { storable: false, reason: "vary-star" };
  let fresh: number | null = null;
  let staleIfError: number | null = null;
  let governed = false;
  for (const field of FRESHNESS_FIELDS) {
    const value = headers.get(field);
    if (value === null) continue;
    const d = parseDirectives(value);
    // `private` marks one user's response, whichever field says it.
    if (d.has("private")) return { storable: false, reason: "private" };
    if (governed) continue;
    governed = true;
    if (d.has("no-store")) return { storable: false, reason: "no-store" };
    if (d.has("no-cache")) return { storable: false, reason: "no-cache" };
    // A shared cache reads `s-maxage` first; the CDN fields may carry either.
    fresh = seconds(d.get("s-maxage")) ?? seconds(d.get("max-age"));
    // must-revalidate forbids a stale copy unless the origin names its own stale-if-error.
    const revalidate = d.has("must-revalidate") || d.has("proxy-revalidate");
    staleIfError = seconds(d.get("stale-if-error")) ?? (revalidate ? 0 : null);
  }
  if (!governed) fresh = expiresLifetime(headers);
  if (fresh === null) return { storable: false, reason: "no-freshness" };
  const age = seconds(headers.get("age")?.trim()) ?? 0;
  const freshS = Math.max(0, fresh - age);
  if (freshS === 0) return { storable: false, reason: "no-freshness" };
  return { storable: true, freshS, staleIfErrorS: staleIfError ?? staleIfErrorS, vary };
}

/** `Expires` less `Date` in seconds, or `null` when either is missing or not a date. */
function expiresLifetime(headers: Headers): number | null {
  const expires = headers.get("expires");
  if (expires === null) return null;
  const at = Date.parse(expires);
  if (Number.isNaN(at)) return 0;
  const date = Date.parse(headers.get("date") ?? "");
  const now = Number.isNaN(date) ? Date.now() : date;
  return Math.max(0, Math.floor((at - now) / 1000));
}
