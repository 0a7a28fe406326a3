import { randomBytes } from "node:crypto";
import { type CompiledMap, compile, serializeMap } from "../../../core/index.js";
import { seededRandom } from "../../helpers/kv-standin.js";
import { startOrigins } from "../../helpers/origins.js";
import { startWorker } from "../../helpers/worker.js";
import { Invariants, type Scenario } from "../scenario.js";

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/** What a visitor's country must be: `cf.country` when it is a code, else XX; never a header. */
function expectedCountry(cf: string | null): string {
  if (cf === null) return "XX";
  const c = cf.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(c) || c === "T1" ? c : "XX";
}

const METHODS = [
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
const CF_COUNTRIES: (string | null)[] = [
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
const SPOOFS = ["DE", "FR", "JP", "RU", "KP", "T1", "XX", "de", "<script>", "DE, FR", "../"];

function hostilePath(r: Rand, debugToken: string): string {
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

function wrongToken(r: Rand, token: string): string {
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

/** A compiled map whose pools point at the test origins. */
function mapAt(
  rev: number,
  origins: Record<string, string>,
  variant: number,
  compiledAt = new Date(),
): CompiledMap {
  const entries = [
    ...Object.entries(origins).map(([pool, url]) => [`pool/${pool}`, { origin: url }] as const),
    ...Object.keys(origins).map((pool) => [`health/${pool}`, { status: "healthy" }] as const),
    ["country/_default", { primary: "par-1", fallbacks: ["ams-1"] }] as const,
    ["country/DE", { primary: variant % 2 ? "fra-1" : "ams-1", fallbacks: ["par-1"] }] as const,
    ["country/FR", { primary: "ams-1", fallbacks: ["fra-1"] }] as const,
    ["country/US", { primary: "fra-1", fallbacks: [] }] as const,
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
      prefix: "/w/",
      floorPool: "par-1",
      originTemplate: "https://{pool}.origin.example.com",
      now: compiledAt,
    },
  ).map;
}

export const workerHostile: Scenario = {
  id: 7,
  title: "Worker under hostile input",
  invariant:
    "0 responses 500; 0 origin URLs leaked without the token; 0 spoofed countries honoured; a warm isolate never serves an older rev than it already served",
  budgetMs: (q) => (q ? 120_000 : 300_000),
  async run(ctx) {
    const total = ctx.quick ? 2_000 : 10_000;
    const r = seededRandom(ctx.seed);
    const debugToken = `dbg-${randomBytes(16).toString("base64url")}`;
    ctx.transcript.secret("DEBUG_TOKEN", debugToken);
    const origins = await startOrigins(["fra-1", "ams-1", "par-1"]);
    ctx.defer(() => origins.close());
    for (const o of origins.all) {
      // A fixed body: the origin itself must not be what leaks its address.
      o.respond((req) => ({
        status: 200,
        headers: {
          "x-seen-country": req.headers["x-edge-country"] ?? "-",
          "x-seen-hop": req.headers["x-edge-hop"] ?? "-",
        },
        body: `served by ${o.name}`,
      }));
    }
    const originUrls = Object.fromEntries(origins.all.map((o) => [o.name, o.url]));
    const secretsOfOrigins = origins.all.flatMap((o) => [o.url, `127.0.0.1:${o.port}`]);
    const worker = await startWorker({
      DEBUG_TOKEN: debugToken,
      ORIGIN_TEMPLATE: originUrls["par-1"] ?? "",
      FLOOR_POOL: "par-1",
      MAX_ATTEMPTS: "2",
    });
    ctx.defer(() => worker.dispose());

    const inv = new Invariants();
    let rev = 100;
    let newestPut = 0;
    let maxServed = 0;
    const statuses = new Map<number, number>();
    let honouredControls = 0;
    let controls = 0;
    let clientRefused = 0;
    let staleSeen = 0;
    let mapChanges = 0;
    // Set by a newer put, cleared by the next swap: the isolate re-reads KV on every request
    // (ISOLATE_CACHE_SECONDS=0), so until then every answer must carry exactly this rev.
    let mustServe: number | null = null;
    let freshChecked = 0;
    const badGateways: string[] = [];

    const mutateMap = async () => {
      mapChanges += 1;
      mustServe = null;
      const kind = pick(r, [
        "newer",
        "newer",
        "older",
        "truncated",
        "wrong-type",
        "missing",
        "garbage",
        "huge",
      ]);
      const current = mapAt(rev, originUrls, rev);
      switch (kind) {
        case "newer":
          rev += 1 + Math.floor(r() * 5);
          newestPut = rev;
          await worker.putMap(serializeMap(mapAt(rev, originUrls, rev)));
          mustServe = rev;
          return;
        case "older":
          return worker.putMap(
            // A stale copy KV may still serve: a lower revision, compiled earlier.
            serializeMap(
              mapAt(
                Math.max(1, rev - 1 - Math.floor(r() * 50)),
                originUrls,
                rev + 1,
                new Date(Date.now() - 60_000 - Math.floor(r() * 600_000)),
              ),
            ),
          );
        case "truncated": {
          const text = serializeMap(current);
          return worker.putMap(text.slice(0, Math.floor(r() * text.length)));
        }
        case "wrong-type":
          return worker.putMap(
            pick(r, [
              "[]",
              "42",
              "null",
              "true",
              '"routes"',
              '{"v":2}',
              `{"v":1,"rev":"${rev + 9}"}`,
              `{"v":1,"rev":${rev + 9},"default":null,"countries":[]}`,
            ]),
          );
        case "missing":
          return worker.deleteMap();
        case "garbage":
          return worker.putMap(randomBytes(200).toString("latin1"));
        default:
          return worker.putMap(`{"v":1,"rev":${rev + 10},"pad":"${"x".repeat(2_000_000)}"`);
      }
    };

    const one = async () => {
      const method = pick(r, METHODS);
      const cf = pick(r, CF_COUNTRIES);
      const headers: Record<string, string> = {};
      const tokenKind = r();
      const validToken = tokenKind < 0.1;
      if (validToken) headers["X-Edge-Debug-Token"] = debugToken;
      else if (tokenKind < 0.6) headers["X-Edge-Debug-Token"] = wrongToken(r, debugToken);
      if (r() < 0.5) headers["CF-IPCountry"] = pick(r, SPOOFS);
      const debugCountry = r() < 0.5 ? pick(r, SPOOFS) : null;
      if (debugCountry !== null) headers["X-Edge-Debug-Country"] = debugCountry;
      const hop = r() < 0.05;
      if (hop) headers["X-Edge-Hop"] = "1";
      for (const h of [
        "X-Edge-Pool",
        "X-Edge-Origin",
        "X-Edge-Revision",
        "X-Edge-Country",
        "X-Edge-Source",
      ]) {
        if (r() < 0.1) headers[h] = pick(r, ["evil", "http://evil.example.com", "999999", "DE"]);
      }
      if (r() < 0.05) headers["X-Junk"] = "j".repeat(1 + Math.floor(r() * 30_000));
      if (r() < 0.05) headers["X-Forwarded-Host"] = "evil.example.com";
      const path = hostilePath(r, debugToken);
      const floorRev = maxServed;
      let res: Awaited<ReturnType<typeof worker.dispatch>>;
      try {
        res = await worker.dispatch(path, {
          method,
          country: cf,
          headers,
          ...(method === "POST" || method === "PUT"
            ? { body: "x".repeat(Math.floor(r() * 5000)) }
            : {}),
        });
      } catch {
        // the HTTP client refused to send it (an impossible request), not an edge answer
        clientRefused += 1;
        return;
      }
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 502 && badGateways.length < 3)
        badGateways.push(
          `${method} ${path.slice(0, 50)} cf=${cf} failover=${res.headers.get("x-edge-failover")} degraded=${res.headers.get("x-edge-degraded")} body=${res.body.slice(0, 80)}`,
        );
      const seen = [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
      const text = `${seen}\n${res.body}`;
      ctx.transcript.add("worker", "response", seen);
      inv.check(res.status !== 500, "status 500", () => `${method} ${path.slice(0, 60)} cf=${cf}`);
      const hasToken = validToken;
      if (!hasToken) {
        const leaked =
          secretsOfOrigins.find((s) => text.includes(s)) ??
          (res.headers.has("x-edge-origin") ? "X-Edge-Origin" : undefined);
        inv.check(
          leaked === undefined,
          "origin leaked without the token",
          () => `${leaked} in ${method} ${path.slice(0, 60)}`,
        );
        const country = res.headers.get("x-edge-country");
        if (country !== null) {
          const want = expectedCountry(cf);
          inv.check(
            country === want,
            "spoofed country honoured",
            () => `cf=${cf} spoof=${headers["CF-IPCountry"]}/${debugCountry} → ${country}`,
          );
          const atOrigin = res.headers.get("x-seen-country");
          if (atOrigin && atOrigin !== "-") {
            inv.check(
              atOrigin === want,
              "spoofed country sent to origin",
              () => `cf=${cf} → origin saw ${atOrigin}`,
            );
          }
        }
      } else if (debugCountry !== null && res.headers.has("x-edge-country") && !hop) {
        controls += 1;
        if (res.headers.get("x-edge-country") === expectedCountry(debugCountry))
          honouredControls += 1;
      }
      const edgePath = new URL(path, "http://edge.test").pathname.startsWith("/__edge/");
      if (hop && !edgePath) {
        // workerd itself answers 501 to methods it does not implement, before the Worker runs.
        const refused =
          res.status === 508 || (res.status === 501 && !res.headers.has("x-seen-hop"));
        inv.check(
          refused,
          "X-Edge-Hop request not refused with 508",
          () => `${method} ${path.slice(0, 40)} → ${res.status}`,
        );
      }
      const seenHop = res.headers.get("x-seen-hop");
      if (seenHop !== null) {
        inv.check(
          seenHop === "1",
          "origin request without X-Edge-Hop: 1",
          () => `${path.slice(0, 40)} → ${seenHop}`,
        );
      }
      const revHeader = res.headers.get("x-edge-revision");
      if (revHeader !== null) {
        const served = Number(revHeader);
        inv.check(
          served >= floorRev,
          "warm isolate went back in time",
          () => `served rev ${served} after rev ${floorRev}`,
        );
        if (served > maxServed) maxServed = served;
        if (mustServe !== null) {
          freshChecked += 1;
          const want = mustServe;
          inv.check(
            served === want,
            "newer map not picked up",
            () => `served rev ${served} after rev ${want} was put`,
          );
        }
      }
      if ((res.headers.get("x-edge-degraded") ?? "").includes("stale-map")) staleSeen += 1;
    };

    // A cold isolate with no map at all first: floor, never 500.
    for (let i = 0; i < 20; i++) await one();
    rev += 1;
    newestPut = rev;
    await worker.putMap(serializeMap(mapAt(rev, originUrls, rev)));
    mustServe = rev;
    const concurrency = 16;
    let done = 20;
    while (done < total) {
      if (r() < 0.3) await mutateMap();
      const n = Math.min(concurrency * 4, total - done);
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < n) {
            next += 1;
            await one();
          }
        }),
      );
      done += n;
      if (done % 2000 < n) ctx.progress(`${done}/${total} requests, max rev served ${maxServed}`);
    }
    inv.check(
      controls === 0 || honouredControls === controls,
      "debug country with a valid token not honoured (the check would be blind)",
      () => `${honouredControls}/${controls}`,
    );
    // The mix may never leave a newer map readable (an older put can follow the first one at
    // once), so finish with one and require the isolate to take it.
    rev += 1;
    newestPut = rev;
    await worker.putMap(serializeMap(mapAt(rev, originUrls, rev)));
    const last = await worker.dispatch("/video/last.ts", { method: "GET", country: "DE" });
    const lastRev = Number(last.headers.get("x-edge-revision"));
    if (lastRev > maxServed) maxServed = lastRev;
    inv.check(
      lastRev === newestPut,
      "newest map not served at the end",
      () => `served rev ${lastRev}, newest put ${newestPut}`,
    );
    inv.check(
      maxServed <= newestPut,
      "revisions served",
      () => `max ${maxServed}, newest put ${newestPut}`,
    );
    const s500 = statuses.get(500) ?? 0;
    const byStatus = [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}:${n}`)
      .join(" ");
    return {
      runs: done,
      figure: `${done} requests, ${mapChanges} map swaps, 500s: ${s500}, leaks: ${inv.count("origin leaked without the token")}, spoofs honoured: ${inv.count("spoofed country honoured")}, rev regressions: ${inv.count("warm isolate went back in time")}`,
      failures: inv.failures(),
      notes: [
        ...badGateways.map((b) => `502 answer: ${b}`),
        `worker statuses ${byStatus}; stale-map answers ${staleSeen}; max rev served ${maxServed} of ${newestPut} put; debug-token controls honoured ${honouredControls}/${controls}; answers checked fresh after a newer put ${freshChecked}; refused by the HTTP client ${clientRefused}`,
      ],
    };
  },
};
