import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom } from "../../../testkit/kv-standin.js";
import {
  FORWARDING,
  selfReferencing,
  startBlackhole,
  startOrigins,
} from "../../../testkit/origins.js";
import { startWorker } from "../../../testkit/worker.js";
import { Invariants, type Scenario } from "../scenario.js";
import { HostileMaps } from "../support/hostile-maps.js";
import {
  blamelessShapeVerdicts,
  CF_COUNTRIES,
  CGI_SPELLINGS,
  cgiSpoofsAmong,
  expectedCountry,
  hostilePath,
  METHODS,
  pick,
  position,
  SPOOFED_FORWARDING,
  SPOOFS,
  VISITOR_IP,
  WANT_FORWARDING,
  wrongToken,
} from "../support/hostile-requests.js";
export const workerHostile: Scenario = {
  id: 7,
  title: "Worker under hostile input",
  invariant:
    "0 responses 500; 0 origin URLs leaked without the token; no origin host in any header of a tokenless response; 0 spoofed countries or forwarding headers honoured, in any spelling a CGI origin reads; debug answers never cacheable; a silent origin fails over and leaves no connection open; a warm isolate never serves an older (history, rev) than it already served",
  budgetMs: (q) => (q ? 120_000 : 300_000),
  async run(ctx) {
    const total = ctx.quick ? 2_000 : 10_000;
    const r = seededRandom(ctx.seed);
    const debugToken = `dbg-${randomBytes(16).toString("base64url")}`;
    ctx.transcript.secret("DEBUG_TOKEN", debugToken);
    const origins = await startOrigins(["fra-1", "ams-1", "par-1"]);
    ctx.defer(() => origins.close());
    const hole = await startBlackhole();
    ctx.defer(() => hole.close());
    for (const o of origins.all) {
      // Origins that redirect to themselves, set cookies for their host and reflect the
      // forwarding headers they got. The body stays fixed: bodies are the origin's own.
      const hostile = selfReferencing(o);
      o.respond((req) => {
        const answer = hostile(req);
        return {
          status: answer?.status ?? 200,
          headers: {
            ...answer?.headers,
            "x-seen-country": req.headers["x-edge-country"] ?? "-",
            "x-seen-hop": req.headers["x-edge-hop"] ?? "-",
            "x-seen-cgi-spoofs": cgiSpoofsAmong(req.headers).join(",") || "-",
          },
          body: `served by ${o.name}`,
        };
      });
    }
    const originUrls: Record<string, string> = {
      ...Object.fromEntries(origins.all.map((o) => [o.name, o.url])),
      "hole-1": hole.url,
    };
    const secretsOfOrigins = [...origins.all, hole].flatMap((o) => [o.url, `127.0.0.1:${o.port}`]);
    const originTimeoutMs = 300;
    const worker = await startWorker({
      DEBUG_TOKEN: debugToken,
      ORIGIN_TEMPLATE: originUrls["par-1"] ?? "",
      FLOOR_POOL: "par-1",
      MAX_ATTEMPTS: "2",
      ORIGIN_TIMEOUT_MS: String(originTimeoutMs),
      // Requests other than GET/HEAD to the silent origin wait this long (default 30 s).
      ORIGIN_ONCE_TIMEOUT_MS: String(originTimeoutMs),
    });
    ctx.defer(() => worker.dispose());

    const inv = new Invariants();
    const maps = new HostileMaps(r, originUrls, {
      put: (text) => worker.putMap(text),
      remove: () => worker.deleteMap(),
    });
    let holeAnswers = 0;
    let maxServed = 0;
    const statuses = new Map<number, number>();
    let honouredControls = 0;
    let controls = 0;
    let clientRefused = 0;
    let staleSeen = 0;
    let freshChecked = 0;
    const badGateways: string[] = [];

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
      headers["CF-Connecting-IP"] = VISITOR_IP;
      for (const [name, value] of Object.entries(SPOOFED_FORWARDING)) {
        if (r() < 0.3) headers[name] = value;
      }
      for (const [name, value] of Object.entries(CGI_SPELLINGS)) {
        if (r() < 0.2) headers[name] = value;
      }
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
        const hostHeader = [...res.headers].find(([, v]) => v.includes("127.0.0.1"));
        inv.check(
          hostHeader === undefined,
          "origin host in a header of a tokenless response",
          () =>
            `${hostHeader?.[0]}: ${hostHeader?.[1].slice(0, 80)} (${method} ${path.slice(0, 40)})`,
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
      } else if (res.headers.has("x-edge-origin")) {
        inv.check(
          res.headers.get("cache-control") === "private, no-store",
          "debug answer cacheable",
          () =>
            `Cache-Control: ${res.headers.get("cache-control")} on ${method} ${path.slice(0, 40)}`,
        );
      }
      if (validToken && debugCountry !== null && res.headers.has("x-edge-country") && !hop) {
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
      if (res.headers.has("x-seen-hop")) {
        const cgiSpoofs = res.headers.get("x-seen-cgi-spoofs");
        inv.check(
          cgiSpoofs === "-",
          "CGI spelling of an edge header at the origin",
          () => `${cgiSpoofs} (${method} ${path.slice(0, 40)})`,
        );
        for (const name of FORWARDING) {
          const got = res.headers.get(`x-seen-${name}`);
          const want = WANT_FORWARDING[name] ?? "-";
          inv.check(
            got === want,
            "forwarding header at the origin not the edge's",
            () => `${name}: ${got} (want ${want})`,
          );
        }
      }
      const country = res.headers.get("x-edge-country");
      const pool = res.headers.get("x-edge-pool");
      if (pool === "hole-1" || (res.headers.get("x-edge-failover") ?? "").startsWith("hole-1>")) {
        holeAnswers += 1;
        const retryable = method === "GET" || method === "HEAD";
        // Others meet the silent origin once (a 504), or pass it over while the isolate has
        // ejected it (docs/reference.md §4): then the next pool answers, nothing having been sent.
        const passedOver = pool === "ams-1" && res.status !== 504;
        inv.check(
          retryable ? passedOver : res.status === 504 || passedOver,
          "silent origin not failed over (GET/HEAD) or not a 504 (others)",
          () => `${method} ${country} → ${res.status} from ${pool}`,
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
          floorRev === 0 || position(served) >= position(floorRev),
          "warm isolate went back in time",
          () => `served rev ${served} after rev ${floorRev}`,
        );
        if (maxServed === 0 || position(served) > position(maxServed)) maxServed = served;
        if (maps.mustServe !== null) {
          freshChecked += 1;
          const want = maps.mustServe;
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
    await maps.putNewer(1);
    const concurrency = 16;
    let done = 20;
    while (done < total) {
      if (maps.history === 0 && done >= total / 2) await maps.restore();
      else if (r() < 0.3) await maps.mutate();
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
    await maps.putNewer(1);
    const last = await worker.dispatch("/video/last.ts", { method: "GET", country: "DE" });
    const lastRev = Number(last.headers.get("x-edge-revision"));
    if (position(lastRev) > position(maxServed)) maxServed = lastRev;
    inv.check(
      lastRev === maps.newestPut,
      "newest map not served at the end",
      () => `served rev ${lastRev}, newest put ${maps.newestPut}`,
    );
    inv.check(
      position(maxServed) <= position(maps.newestPut),
      "revisions served",
      () => `max ${maxServed}, newest put ${maps.newestPut}`,
    );
    // Shapes that are the request's or the client's fault: none may count against an origin.
    const shapes = await blamelessShapeVerdicts(
      (await worker.mf.ready).origin,
      "FR",
      "ams-1",
      async () => {
        const r = await worker.dispatch("/video/after-shape.ts", { country: "FR" });
        return { pool: r.headers.get("x-edge-pool"), failover: r.headers.get("x-edge-failover") };
      },
    );
    for (const v of shapes)
      inv.check(v.problem === null, "request shape held against an origin or answered 5xx", () => {
        return `${v.shape}: ${v.problem}`;
      });
    inv.check(holeAnswers > 0, "no request met the silent origin (the check would be blind)", () =>
      String(holeAnswers),
    );
    // Every attempt at the silent origin was aborted at its timeout: nothing stays open.
    const openUntil = Date.now() + 5_000;
    while (hole.open > 0 && Date.now() < openUntil) await sleep(50);
    inv.check(
      hole.open === 0,
      "connections left open to a silent origin",
      () => `${hole.open} of ${hole.accepted}`,
    );
    const s500 = statuses.get(500) ?? 0;
    const byStatus = [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}:${n}`)
      .join(" ");
    return {
      runs: done,
      figure: `${done} requests, ${maps.changes} map swaps, 500s: ${s500}, leaks: ${inv.count("origin leaked without the token")}, origin hosts in headers: ${inv.count("origin host in a header of a tokenless response")}, forwarding spoofs: ${inv.count("forwarding header at the origin not the edge's")}, CGI spellings: ${inv.count("CGI spelling of an edge header at the origin")}, spoofs honoured: ${inv.count("spoofed country honoured")}, rev regressions: ${inv.count("warm isolate went back in time")}`,
      failures: inv.failures(),
      notes: [
        ...badGateways.map((b) => `502 answer: ${b}`),
        `worker statuses ${byStatus}; silent-origin answers ${holeAnswers} (${hole.accepted} connections, ORIGIN_TIMEOUT_MS=${originTimeoutMs}); stale-map answers ${staleSeen}; max rev served ${maxServed} of ${maps.newestPut} put; debug-token controls honoured ${honouredControls}/${controls}; answers checked fresh after a newer put ${freshChecked}; refused by the HTTP client ${clientRefused}`,
      ],
    };
  },
};
