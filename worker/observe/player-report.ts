import { type CmcdReadings, cmcdReadings } from "./cmcd-readings.js";

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

/** A usable throughput: finite, above zero, below 10 Tbit/s. */
function kbps(value: number): number | null {
  return Number.isFinite(value) && value > 0 && value < 1e10 ? value : null;
}

/**
 * What the `CMCD-*` headers (each a structured-field dictionary, CTA-5004) say, a key in a
 * later one winning; `null` when one is malformed: a player's malformed text counts as not sent.
 */
function cmcdOf(headers: Headers): CmcdReadings | null {
  let out: CmcdReadings = {};
  for (const name of CMCD_HEADERS) {
    const text = headers.get(name);
    if (!text) continue;
    const readings = cmcdReadings(text);
    if (readings === null) return null;
    out = { ...out, ...readings };
  }
  return out;
}

/**
 * The value of the first query parameter `name` in `query` (no `?`), decoded as
 * `URLSearchParams` does, or `null`. Only that pair is decoded: `URLSearchParams` decodes every
 * pair of the query, a third of the recording's budget on a signed segment URL.
 */
function queryParam(query: string, name: string): string | null {
  for (let at = query.indexOf(name); at !== -1; at = query.indexOf(name, at + 1)) {
    const end = at + name.length;
    if (
      (at > 0 && query[at - 1] !== "&") ||
      (end < query.length && !"=&".includes(query[end] ?? ""))
    )
      continue;
    if (query[end] !== "=") return "";
    const stop = query.indexOf("&", end);
    const raw = query.slice(end + 1, stop === -1 ? undefined : stop);
    if (!raw.includes("%") && !raw.includes("+")) return raw;
    try {
      return decodeURIComponent(raw.includes("+") ? raw.replaceAll("+", " ") : raw);
    } catch {
      // A stray `%` stays as it is, as `URLSearchParams` leaves it.
      return new URLSearchParams(query).get(name);
    }
  }
  return null;
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
  const data = cmcdText !== null ? cmcdReadings(cmcdText) : cmcdOf(request.headers);
  const starved = data?.bs ?? null;
  const mtp = data?.mtp;
  const throughputKbps =
    (typeof mtp === "number" ? kbps(mtp) : null) ?? (query === "" ? null : steeringKbps(query));
  if (starved === null && throughputKbps === null) return NOTHING;
  return { starved, throughputKbps };
}
