import { cmcdMembers } from "./cmcd-members.js";

/** What a player said about itself on one request (CMCD, CTA-5004; steering throughput, §15). */
export interface PlayerReport {
  /** CMCD `bs` (buffer starvation); `null` when not sent. */
  readonly starved: boolean | null;
  /** CMCD `mtp`, else `_HLS_throughput` / `_DASH_throughput`, in kbit/s; `null` when not sent. */
  readonly throughputKbps: number | null;
}

const NOTHING: PlayerReport = { starved: null, throughputKbps: null };

/** CMCD's headers as CTA-5004 lists them; a key in a later one wins. */
const CMCD_HEADERS = ["CMCD-Object", "CMCD-Request", "CMCD-Session", "CMCD-Status"] as const;

/** The CMCD keys a report reads. */
const KEYS = ["bs", "mtp"] as const;

type Cmcd = { [K in (typeof KEYS)[number]]?: unknown };

/** A usable throughput: finite, above zero, below 10 Tbit/s. */
function kbps(value: number): number | null {
  return Number.isFinite(value) && value > 0 && value < 1e10 ? value : null;
}

/** `mtp` as CMCD carries it: a number (v1), or an inner list whose first item counts (v2). */
function mtpOf(value: unknown): number | null {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "number" ? kbps(first) : null;
}

/**
 * What CMCD `texts` (each a structured-field dictionary, CTA-5004) say of {@link KEYS}; `null`
 * when one is malformed: a player's malformed text counts as not sent.
 */
function cmcdOf(texts: readonly (string | null)[]): Cmcd | null {
  const out: Cmcd = {};
  for (const text of texts) {
    if (!text) continue;
    const members = cmcdMembers(text);
    if (members === null) return null;
    for (const key of KEYS) if (members.has(key)) out[key] = members.get(key);
  }
  return out;
}

/** The value of query parameter `name` in `query` (no `?`), decoded, or `null`. */
function queryParam(query: string, name: string): string | null {
  if (!query.includes(name)) return null;
  try {
    return new URLSearchParams(query).get(name);
  } catch {
    return null;
  }
}

/** Steering throughput is in bit/s. */
function steeringKbps(query: string): number | null {
  const raw = queryParam(query, "_HLS_throughput") ?? queryParam(query, "_DASH_throughput");
  if (raw === null || !/^\d{1,15}(\.\d+)?$/.test(raw)) return null;
  return kbps(Number(raw) / 1000);
}

/**
 * The player's report on `request`: CMCD from its `CMCD` query parameter or its `CMCD-*`
 * headers (query first, as CTA-5004 sends one or the other), and the steering throughput of a
 * steering-manifest request. Nothing else of the request is read or kept.
 */
export function playerReport(request: Request): PlayerReport {
  const url = request.url;
  const q = url.indexOf("?");
  const query =
    q === -1 ? "" : url.slice(q + 1, url.indexOf("#", q) === -1 ? undefined : url.indexOf("#", q));
  const cmcdText = query === "" ? null : queryParam(query, "CMCD");
  const h = request.headers;
  const data = cmcdOf(cmcdText !== null ? [cmcdText] : CMCD_HEADERS.map((name) => h.get(name)));
  const starved = typeof data?.bs === "boolean" ? data.bs : null;
  const throughputKbps = mtpOf(data?.mtp) ?? (query === "" ? null : steeringKbps(query));
  if (starved === null && throughputKbps === null) return NOTHING;
  return { starved, throughputKbps };
}
