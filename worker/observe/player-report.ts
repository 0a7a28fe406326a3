import { type CmcdData, decodeCmcd, fromCmcdHeaders } from "@svta/cml-cmcd";

/** What a player said about itself on one request (CMCD, CTA-5004; steering throughput, §15). */
export interface PlayerReport {
  /** CMCD `bs` (buffer starvation); `null` when not sent. */
  readonly starved: boolean | null;
  /** CMCD `mtp`, else `_HLS_throughput` / `_DASH_throughput`, in kbit/s; `null` when not sent. */
  readonly throughputKbps: number | null;
}

const NOTHING: PlayerReport = { starved: null, throughputKbps: null };

/** A usable throughput: finite, above zero, below 10 Tbit/s. */
function kbps(value: number): number | null {
  return Number.isFinite(value) && value > 0 && value < 1e10 ? value : null;
}

/** `mtp` as CMCD carries it: a number (v1), or an inner list whose first item counts (v2). */
function mtpOf(value: unknown): number | null {
  if (typeof value === "number") return kbps(value);
  const list = Array.isArray(value)
    ? value
    : typeof value === "object" &&
        value !== null &&
        Array.isArray((value as { value?: unknown }).value)
      ? (value as { value: unknown[] }).value
      : null;
  const first: unknown = list?.[0];
  if (typeof first === "number") return kbps(first);
  if (typeof first === "object" && first !== null) {
    const v = (first as { value?: unknown }).value;
    if (typeof v === "number") return kbps(v);
  }
  return null;
}

/** Decodes CMCD text; a player's malformed text counts as not sent. */
function decoded(text: string): CmcdData | null {
  try {
    return decodeCmcd(text);
  } catch {
    return null;
  }
}

function headerData(headers: Headers): CmcdData | null {
  try {
    return fromCmcdHeaders(headers);
  } catch {
    return null;
  }
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
  const data = cmcdText !== null ? decoded(cmcdText) : headerData(request.headers);
  const starved = typeof data?.bs === "boolean" ? data.bs : null;
  const throughputKbps = mtpOf(data?.mtp) ?? (query === "" ? null : steeringKbps(query));
  if (starved === null && throughputKbps === null) return NOTHING;
  return { starved, throughputKbps };
}
