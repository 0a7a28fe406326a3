import { FRESHNESS_FIELDS } from "./cache-policy.js";

/**
 * The header that carries what the edge knows about a stored copy. It is in the edge's own
 * namespace, so no origin can forge it (the response path strips every `X-Edge-*` an origin
 * sends) and it never reaches a viewer.
 */
export const ENTRY_HEADER = "x-edge-cache-entry";

/** Headers the stored copy holds in `ENTRY_HEADER` instead, so the Cache API keeps the copy as long as the edge needs. */
const MOVED = [...FRESHNESS_FIELDS, "expires", "age"] as const;

/** What the edge knows about a stored copy. */
export interface EntryMeta {
  /** When the edge stored it, ms since the epoch. */
  readonly storedAt: number;
  /** Seconds it is fresh for from `storedAt`. */
  readonly freshS: number;
  /** Seconds past freshness it may stand in when every pool fails. */
  readonly staleIfErrorS: number;
  /** The origin's `Age` when it was stored. */
  readonly ageS: number;
  /** The request's values of the headers the response varies on. */
  readonly vary: Readonly<Record<string, string>>;
  /** The origin's freshness headers, as sent. */
  readonly moved: readonly (readonly [string, string])[];
}

/**
 * The copy to store: the origin's status, headers and body exactly as sent (the edge's own
 * headers are added later, on the way out), with the freshness headers moved into
 * `ENTRY_HEADER` and a `Cache-Control` that keeps it for its freshness plus its stale window.
 */
export function storedCopy(
  origin: Response,
  body: ReadableStream | null,
  meta: Omit<EntryMeta, "moved" | "ageS">,
): Response {
  const headers = new Headers(origin.headers);
  const moved: [string, string][] = [];
  for (const name of MOVED) {
    const value = headers.get(name);
    if (value === null) continue;
    moved.push([name, value]);
    headers.delete(name);
  }
  const ageS = Number(moved.find(([n]) => n === "age")?.[1]?.trim() ?? "0") || 0;
  const full: EntryMeta = { ...meta, ageS, moved };
  headers.set(ENTRY_HEADER, JSON.stringify(full));
  headers.set("cache-control", `public, max-age=${meta.freshS + meta.staleIfErrorS}`);
  return new Response(body, { status: origin.status, statusText: origin.statusText, headers });
}

function isMeta(v: unknown): v is EntryMeta {
  if (typeof v !== "object" || v === null) return false;
  const m = v as Record<string, unknown>;
  return (
    typeof m.storedAt === "number" &&
    typeof m.freshS === "number" &&
    typeof m.staleIfErrorS === "number" &&
    typeof m.ageS === "number" &&
    typeof m.vary === "object" &&
    m.vary !== null &&
    Array.isArray(m.moved)
  );
}

/** A copy read back from the cache: the origin's response as it was sent, and what the edge knows. */
export interface CachedCopy {
  readonly response: Response;
  readonly meta: EntryMeta;
}

/**
 * The origin's response from a stored copy (freshness headers restored, `Age` brought up to
 * date, the Cache API's own headers dropped); `null` for a copy the edge did not store.
 */
export function readCopy(stored: Response, now: number): CachedCopy | null {
  const raw = stored.headers.get(ENTRY_HEADER);
  if (raw === null) return null;
  let meta: unknown;
  try {
    meta = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isMeta(meta)) return null;
  const headers = new Headers(stored.headers);
  for (const name of [ENTRY_HEADER, "cache-control", "age", "cf-cache-status"]) {
    headers.delete(name);
  }
  for (const [name, value] of meta.moved) if (name !== "age") headers.set(name, value);
  headers.set("age", String(meta.ageS + Math.max(0, Math.floor((now - meta.storedAt) / 1000))));
  return {
    response: new Response(stored.body, {
      status: stored.status,
      statusText: stored.statusText,
      headers,
    }),
    meta,
  };
}

/** Seconds since the copy was stored, against its freshness: `fresh`, `stale` (within `stale-if-error`) or `expired`. */
export function copyState(meta: EntryMeta, now: number): "fresh" | "stale" | "expired" {
  const elapsed = (now - meta.storedAt) / 1000;
  if (elapsed < meta.freshS) return "fresh";
  return elapsed < meta.freshS + meta.staleIfErrorS ? "stale" : "expired";
}
