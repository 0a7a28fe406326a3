import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { type CompiledMap, compile } from "../../../core/index.js";
import { type RequestShape, sendShape } from "../../../testkit/request-shapes.js";

/** Hostile requests and maps for scenario 7 (the Worker under hostile input). */
/** A seeded random source in [0, 1). */
export type Rand = () => number;
/** One element of `xs`, chosen by `r`. */
export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/**
 * Revisions of the first etcd history start here, and those of the second (after a simulated
 * restore) at 1, so a served `X-Edge-Revision` tells which history it came from.
 */
export const FIRST_HISTORY_REV = 10_000;

/** A map's place in the (history, rev) order, from its revision alone (see above). */
export function position(rev: number): number {
  return rev >= FIRST_HISTORY_REV ? rev - FIRST_HISTORY_REV : FIRST_HISTORY_REV + rev;
}

/** The IP Cloudflare reports for the visitor (always sent: Miniflare would put 127.0.0.1). */
export const VISITOR_IP = "203.0.113.77";
/** Forwarding headers a client may forge; the edge must replace every one. */
export const SPOOFED_FORWARDING: Record<string, string> = {
  "X-Forwarded-For": "6.6.6.6",
  "X-Forwarded-Host": "evil.example.com",
  "X-Forwarded-Proto": "gopher",
  "X-Forwarded-Port": "31337",
  Forwarded: "for=6.6.6.6;host=evil.example.com",
  "X-Real-IP": "6.6.6.6",
  "True-Client-IP": "6.6.6.6",
};
/** What the origin must have seen of each forwarding header (`-`: nothing). */
export const WANT_FORWARDING: Record<string, string> = {
  "x-forwarded-for": VISITOR_IP,
  "x-forwarded-host": "edge.test",
  "x-forwarded-proto": "http",
};

/** What a visitor's country must be: `cf.country` when it is a code, else XX; never a header. */
export function expectedCountry(cf: string | null): string {
  if (cf === null) return "XX";
  const c = cf.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(c) || c === "T1" ? c : "XX";
}

/** Request methods, GET-heavy, with ones workerd itself refuses. */
export const METHODS = [
  "GET",
  "GET",
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "PATCH",
  "OPTIONS",
  "PROPFIND",
  "PURGE",
  "X-HOSTILE",
];
/** `request.cf.country` values, valid and not (`null`: none). */
export const CF_COUNTRIES: (string | null)[] = [
  "DE",
  "FR",
  "US",
  "GB",
  "XX",
  "T1",
  null,
  "de",
  "ZZZ",
  "",
  "D",
  "1A",
  " fr",
  "T2",
];
/** Country claims a client may put in `CF-IPCountry` or `X-Edge-Debug-Country`. */
export const SPOOFS = ["DE", "FR", "JP", "RU", "KP", "T1", "XX", "de", "<script>", "DE, FR", "../"];

/** A path (with query) chosen to confuse routing, the `/__edge/` namespace or a proxy. */
export function hostilePath(r: Rand, debugToken: string): string {
  return pick(r, [
    "/",
    "/video/seg-1.ts?x=1",
    "/__edge/health",
    "/__edge/route",
    "/__edge/route?country=DE",
    "/__EDGE/route",
    "/__edge/../__edge/route",
    "/%2e%2e/%2e%2e/etc/passwd",
    "//evil.example.com/steal",
    "/redirect?url=http://evil.example.com/",
    `/${"a".repeat(1 + Math.floor(r() * 6000))}`,
    "/caf%C3%A9/%00/%ff",
    `/?X-Edge-Debug-Token=${debugToken}`,
    "/@evil.example.com",
    "/a/b/../../c;param?q=%0d%0aX-Edge-Pool:%20evil",
  ]);
}

/** A debug token that is not `token` (near misses included). */
export function wrongToken(r: Rand, token: string): string {
  return pick(r, [
    "",
    "x",
    token.slice(0, -1),
    `${token}x`,
    token.toUpperCase(),
    `${token.slice(0, 4)} ${token.slice(4)}`,
    randomBytes(16).toString("hex"),
    "null",
  ]);
}

/** A compiled map whose pools point at the test origins (`hole-1` never answers). */
export function mapAt(
  rev: number,
  origins: Record<string, string>,
  variant: number,
  history: number,
  compiledAt = new Date(),
): CompiledMap {
  const entries = [
    ...Object.entries(origins).map(([pool, url]) => [`pool/${pool}`, { origin: url }] as const),
    ...Object.keys(origins).map((pool) => [`health/${pool}`, { status: "healthy" }] as const),
    ["country/_default", { primary: "par-1", fallbacks: ["ams-1"] }] as const,
    ["country/DE", { primary: variant % 2 ? "fra-1" : "ams-1", fallbacks: ["par-1"] }] as const,
    ["country/FR", { primary: "ams-1", fallbacks: ["fra-1"] }] as const,
    ["country/US", { primary: "fra-1", fallbacks: [] }] as const,
    ["country/GB", { primary: "hole-1", fallbacks: ["ams-1"] }] as const,
    ["epoch", String(rev)] as const,
  ];
  return compile(
    {
      revision: rev,
      entries: entries.map(([k, v]) => ({
        key: `/w/${k}`,
        value: typeof v === "string" ? v : JSON.stringify(v),
      })),
    },
    {
      carried: null,
      prefix: "/w/",
      floorPool: "par-1",
      originTemplate: "https://{pool}.origin.example.com",
      now: compiledAt,
      history,
    },
  ).map;
}

/**
 * Client headers spelled the way a CGI origin reads the edge's own, a forwarding claim or
 * Cloudflare's (any case, `_` for `-`: PHP reads `X_Edge_Country` as `HTTP_X_EDGE_COUNTRY`, and
 * the last sent wins). The edge must drop every one (docs/reference.md §4).
 */
export const CGI_SPELLINGS: Record<string, string> = {
  X_Forwarded_For: "6.6.6.6",
  "X-Forwarded_Host": "evil.example.com",
  x_forwarded_proto: "gopher",
  "X-Real_IP": "6.6.6.6",
  TRUE_CLIENT_IP: "6.6.6.6",
  X_Edge_Country: "KP",
  "x-edge_revision": "999999",
  X_Edge_Attr_Tokenizer: "evil",
  X_EDGE_POOL: "evil",
  X_Edge_Hop: "0",
  CF_Connecting_IP: "6.6.6.6",
  CF_IPCountry: "KP",
};

/** A name a CGI origin reads as an edge, forwarding or Cloudflare header, spelled with `_`. */
const CGI_OWNED = /^(x-edge-|x-forwarded-|cf-|forwarded$|x-real-ip$|true-client-ip$)/;

/**
 * The names among an origin's received request headers that a CGI origin would read as a
 * header the edge owns (or Cloudflare does) but that the edge did not write: spelled with `_`.
 */
export function cgiSpoofsAmong(received: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(received).filter(
    (name) => name.includes("_") && CGI_OWNED.test(name.toLowerCase().replaceAll("_", "-")),
  );
}

/**
 * Request shapes that are the request's or the client's fault, never an origin's (issue 50,
 * item 1): a GET or HEAD carrying a body (also `Content-Length: 0` and an empty chunked one), a
 * POST asking for a WebSocket upgrade, and uploads whose client drops mid-body. Each must reach
 * the origin or get a clear 4xx, and none may count against the origin (docs/reference.md §4).
 */
export const BLAMELESS_SHAPES: readonly RequestShape[] = [
  { name: "GET with a body", method: "GET", headers: { "content-length": "1" }, body: "x" },
  {
    name: "GET with Content-Length: 0",
    method: "GET",
    headers: { "content-length": "0" },
    body: "",
  },
  {
    name: "empty chunked GET",
    method: "GET",
    headers: { "transfer-encoding": "chunked" },
    body: "",
  },
  { name: "HEAD with a body", method: "HEAD", headers: { "content-length": "1" }, body: "x" },
  {
    name: "POST asking for a WebSocket upgrade",
    method: "POST",
    headers: { upgrade: "websocket", connection: "Upgrade", "content-length": "1" },
    body: "x",
  },
  {
    name: "POST dropped mid-upload",
    method: "POST",
    headers: { "content-length": "100000" },
    body: "0123456789",
    dropMidUpload: true,
  },
  {
    name: "chunked PUT dropped mid-upload",
    method: "PUT",
    headers: { "transfer-encoding": "chunked" },
    body: "0123456789",
    dropMidUpload: true,
  },
];

/** How the edge took one of {@link BLAMELESS_SHAPES}: a problem, or `null` when it was right. */
export interface ShapeVerdict {
  readonly shape: string;
  readonly problem: string | null;
}

/**
 * Sends every shape of {@link BLAMELESS_SHAPES} twice from `country` (whose route starts at
 * `pool`) to the workerd at `base`, each followed by a plain GET that `plain` sends: the shape must
 * be answered below 500 (or dropped by its own client), and the plain GET served by `pool` with
 * no failover, as nothing was held against it.
 */
export async function blamelessShapeVerdicts(
  base: string,
  country: string,
  pool: string,
  plain: () => Promise<{ pool: string | null; failover: string | null }>,
): Promise<ShapeVerdict[]> {
  const out: ShapeVerdict[] = [];
  for (const shape of BLAMELESS_SHAPES) {
    let problem: string | null = null;
    for (let i = 0; i < 2 && problem === null; i++) {
      const answer = await sendShape(base, "/video/shape.ts", shape, country);
      if (answer && answer.status >= 500) problem = `answered ${answer.status}`;
    }
    // a dropped upload ends in the Worker once workerd reports the client's body broken
    if (shape.dropMidUpload) await sleep(500);
    const after = await plain();
    if (problem === null && (after.pool !== pool || after.failover !== null))
      problem = `the next GET went to ${after.pool} (failover ${after.failover})`;
    out.push({ shape: shape.name, problem });
  }
  return out;
}
