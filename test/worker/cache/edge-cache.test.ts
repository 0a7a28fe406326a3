import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type CompiledMap, serializeMap, shedRoute } from "../../../core/index.js";
import {
  type CannedResponse,
  type Origins,
  type ReceivedRequest,
  startOrigins,
} from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { buildMap, type MapSpec } from "../../cases/routing-cases.js";

const TOKEN = "cache-test-debug-token";
const POOLS = ["fra-1", "ams-1", "par-1"] as const;

/** 2,000 bytes of a video segment, the same from every pool (they hold the same content). */
function segmentBody(path: string): string {
  return Array.from({ length: 2000 }, (_, i) =>
    String.fromCharCode(65 + ((i * 7 + path.length) % 26)),
  ).join("");
}

let playlistVersion = 0;

/**
 * What a video origin sends, by path: segments for an hour, a live playlist for 2 s (a new
 * version each time it is fetched), and the answers no shared cache may keep.
 */
function videoOrigin(self: string, originUrl: string) {
  return (req: ReceivedRequest): CannedResponse | undefined => {
    const path = req.url.split("?")[0] ?? "";
    if (path.startsWith("/seg/")) {
      return {
        status: 200,
        headers: { "content-type": "video/mp2t", "cache-control": "public, max-age=3600" },
        body: segmentBody(path),
      };
    }
    if (path === "/live.m3u8") {
      playlistVersion += 1;
      return {
        status: 200,
        headers: { "content-type": "application/vnd.apple.mpegurl", "cache-control": "max-age=2" },
        body: `#EXTM3U\n#v${playlistVersion}\n`,
      };
    }
    if (path === "/cookie") {
      return {
        status: 200,
        headers: { "cache-control": "public, max-age=600", "set-cookie": "sid=viewer-one" },
        body: `for ${req.headers["x-viewer"] ?? "?"}`,
      };
    }
    if (path === "/private") {
      return {
        status: 200,
        headers: { "cache-control": "private, max-age=600" },
        body: `for ${req.headers["x-viewer"] ?? "?"}`,
      };
    }
    if (path === "/account") {
      return {
        status: 200,
        headers: { "cache-control": "public, max-age=600" },
        body: `for ${req.headers.authorization ?? "?"}`,
      };
    }
    if (path === "/cdn-only") {
      return {
        status: 200,
        headers: { "cache-control": "no-store", "cdn-cache-control": "max-age=600" },
        body: "kept by the edge, not by browsers",
      };
    }
    if (path === "/moved") {
      return {
        status: 200,
        headers: {
          "cache-control": "max-age=600",
          "content-location": `${originUrl}/moved/here`,
          "x-edge-origin": originUrl,
        },
        body: "moved",
      };
    }
    if (path === "/market") {
      return {
        status: 200,
        headers: { "cache-control": "max-age=600" },
        body: `market ${req.headers["x-edge-attr-market"] ?? "none"}`,
      };
    }
    if (path === "/no-lifetime") return { status: 200, body: `from ${self}` };
    return undefined;
  };
}

describe("the edge cache in workerd (one copy per location, whatever the pool)", () => {
  let origins: Origins;
  let worker: TestWorker;

  const hits = () => origins.all.reduce((n, o) => n + o.hits, 0);
  let rev = 0;
  /** Puts a map with the next revision (the Worker keeps the newest it has seen). */
  const put = (spec: MapSpec, edit?: (m: CompiledMap) => CompiledMap) => {
    rev += 1;
    const map = buildMap(spec, { rev, originOf: (p) => origins.get(p).url });
    return worker.putMap(serializeMap(edit ? edit(map) : map));
  };
  const DE_ON_FRA: MapSpec = {
    default: { chain: ["par-1"], source: "country/_default" },
    countries: { DE: { chain: ["fra-1", "ams-1"], source: "country/DE" } },
  };

  beforeAll(async () => {
    origins = await startOrigins([...POOLS]);
    for (const o of origins.all) o.respond(videoOrigin(o.name, o.url));
    worker = await startWorker({
      DEBUG_TOKEN: TOKEN,
      ORIGIN_SIGNING_KEY: "sign",
      MAX_ATTEMPTS: "3",
      CACHE_IGNORE_PARAMS: "token, Expires",
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(async () => {
    await put(DE_ON_FRA);
    for (const o of origins.all) {
      o.reset();
      o.respond(videoOrigin(o.name, o.url));
    }
  });

  it("50 viewers of one segment at once make one origin fetch, and all get its bytes", async () => {
    const path = "/seg/fifty-1.ts";
    const all = await Promise.all(
      Array.from({ length: 50 }, () => worker.dispatch(path, { country: "DE" })),
    );
    expect(hits()).toBe(1);
    for (const res of all) {
      expect(res.status).toBe(200);
      expect(res.body).toBe(segmentBody(path));
    }
    const statuses = all.map((r) => r.headers.get("x-edge-cache"));
    expect(statuses.filter((s) => s === "MISS")).toHaveLength(1);
    expect(statuses.filter((s) => s === "HIT")).toHaveLength(49);
  });

  it("a live playlist with max-age=2 is served from the cache for 2 s, never longer", async () => {
    const first = await worker.dispatch("/live.m3u8", { country: "DE" });
    const storedAt = performance.now();
    expect(first.headers.get("x-edge-cache")).toBe("MISS");
    const version = first.body;
    while (performance.now() - storedAt < 1700) {
      const res = await worker.dispatch("/live.m3u8", { country: "DE" });
      // Checked after the answer: a HIT answered at 1.7 s or later may be the edge's 2 s edge.
      if (performance.now() - storedAt < 1700) {
        expect(res.headers.get("x-edge-cache")).toBe("HIT");
        expect(res.body).toBe(version);
      }
      await sleep(200);
    }
    expect(hits()).toBe(1);
    await sleep(Math.max(0, 2100 - (performance.now() - storedAt)));
    const later = await worker.dispatch("/live.m3u8", { country: "DE" });
    expect(later.headers.get("x-edge-cache")).toBe("MISS");
    expect(later.body).not.toBe(version);
    expect(hits()).toBe(2);
  });

  it("answers a Range request with 206 from the cached whole object", async () => {
    const path = "/seg/range-1.ts";
    expect((await worker.dispatch(path, { country: "DE" })).headers.get("x-edge-cache")).toBe(
      "MISS",
    );
    const res = await worker.dispatch(path, {
      country: "DE",
      headers: { Range: "bytes=100-199" },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get("x-edge-cache")).toBe("HIT");
    expect(res.headers.get("content-range")).toBe("bytes 100-199/2000");
    expect(res.body).toBe(segmentBody(path).slice(100, 200));
    expect(hits()).toBe(1);
  });

  it.each([
    ["/cookie", "Set-Cookie"],
    ["/private", "Cache-Control: private"],
  ])("never serves a %s response (%s) to a second viewer", async (path) => {
    const a = await worker.dispatch(path, { country: "DE", headers: { "X-Viewer": "a" } });
    const b = await worker.dispatch(path, { country: "DE", headers: { "X-Viewer": "b" } });
    expect(a.body).toBe("for a");
    expect(a.headers.get("x-edge-cache")).toBe("MISS");
    expect(b.body).toBe("for b");
    // The isolate remembers the URL as not cacheable: straight to the origin (hit-for-pass).
    expect(b.headers.get("x-edge-cache")).toBe("BYPASS");
    expect(hits()).toBe(2);
  });

  it("never keeps or serves a cached answer for a request with Authorization", async () => {
    const a = await worker.dispatch("/account", {
      country: "DE",
      headers: { Authorization: "Bearer a" },
    });
    expect(a.headers.get("x-edge-cache")).toBe("BYPASS");
    const plain = await worker.dispatch("/account", { country: "DE" });
    expect(plain.body).toBe("for ?");
    expect(plain.headers.get("x-edge-cache")).toBe("MISS");
    const b = await worker.dispatch("/account", {
      country: "DE",
      headers: { authorization: "Bearer b" },
    });
    expect(b.body).toBe("for Bearer b");
    expect(b.headers.get("x-edge-cache")).toBe("BYPASS");
    expect(hits()).toBe(3);
  });

  it("obeys CDN-Cache-Control over Cache-Control, and gives the viewer the origin's headers", async () => {
    await worker.dispatch("/cdn-only", { country: "DE" });
    const res = await worker.dispatch("/cdn-only", { country: "DE" });
    expect(res.headers.get("x-edge-cache")).toBe("HIT");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("cdn-cache-control")).toBe("max-age=600");
    expect(hits()).toBe(1);
  });

  it("does not keep a response without an explicit lifetime", async () => {
    const first = await worker.dispatch("/no-lifetime", { country: "DE" });
    expect(first.headers.get("x-edge-cache")).toBe("MISS");
    const res = await worker.dispatch("/no-lifetime", { country: "DE" });
    expect(res.headers.get("x-edge-cache")).toBe("BYPASS");
    expect(hits()).toBe(2);
  });

  it("keys without the ignored query parameters, in any case", async () => {
    await worker.dispatch("/seg/signed.ts?token=abc&q=1", { country: "DE" });
    const same = await worker.dispatch("/seg/signed.ts?TOKEN=def&q=1&expires=9", {
      country: "DE",
    });
    expect(same.headers.get("x-edge-cache")).toBe("HIT");
    const other = await worker.dispatch("/seg/signed.ts?token=abc&q=2", { country: "DE" });
    expect(other.headers.get("x-edge-cache")).toBe("MISS");
    expect(hits()).toBe(2);
    // The origin still receives the viewer's whole query.
    expect(origins.get("fra-1").requests[0]?.url).toBe("/seg/signed.ts?token=abc&q=1");
  });

  it("bypasses the cache for anything but a GET", async () => {
    await worker.dispatch("/seg/methods.ts", { country: "DE" });
    for (const method of ["HEAD", "POST", "PUT", "DELETE"]) {
      const res = await worker.dispatch("/seg/methods.ts", {
        country: "DE",
        method,
        ...(method === "HEAD" ? {} : { body: "x" }),
      });
      expect(res.headers.get("x-edge-cache")).toBe("BYPASS");
    }
    expect(hits()).toBe(5);
  });

  it("stores the origin's response before the edge's headers: a debug request leaves nothing of the debug in the copy", async () => {
    const debug = await worker.dispatch("/moved", {
      country: "DE",
      headers: { "X-Edge-Debug-Token": TOKEN },
    });
    expect(debug.headers.get("x-edge-cache")).toBe("MISS");
    expect(debug.headers.get("x-edge-origin")).toBe(origins.get("fra-1").url);
    expect(debug.headers.get("cache-control")).toBe("private, no-store");
    const viewer = await worker.dispatch("/moved", { country: "DE" });
    expect(viewer.headers.get("x-edge-cache")).toBe("HIT");
    expect(viewer.headers.get("x-edge-origin")).toBeNull();
    expect(viewer.headers.get("cache-control")).toBe("max-age=600");
    expect(viewer.headers.get("content-location")).toBe("http://edge.test/moved/here");
    for (const [name, value] of viewer.headers) {
      expect(value).not.toContain("127.0.0.1");
      if (name.startsWith("x-edge-")) {
        expect([
          "x-edge-pool",
          "x-edge-country",
          "x-edge-revision",
          "x-edge-source",
          "x-edge-cache",
        ]).toContain(name);
      }
    }
    // A debug hit shows the route's origin and stays out of every other cache.
    const debugHit = await worker.dispatch("/moved", {
      country: "DE",
      headers: { "x-edge-debug-token": TOKEN },
    });
    expect(debugHit.headers.get("x-edge-cache")).toBe("HIT");
    expect(debugHit.headers.get("cache-control")).toBe("private, no-store");
    expect(hits()).toBe(1);
  });

  it("keeps one copy per market: routes with different attributes never share, the same ones do", async () => {
    await put(
      {
        default: { chain: ["par-1"], source: "country/_default" },
        countries: {
          DE: { chain: ["fra-1"], source: "country/DE" },
          AT: { chain: ["fra-1"], source: "country/AT" },
          CH: { chain: ["ams-1"], source: "country/CH" },
        },
      },
      (m) => {
        const { DE, AT, CH } = m.countries;
        if (!DE || !AT || !CH) throw new Error("routes missing");
        return {
          ...m,
          countries: {
            DE: { ...DE, attrs: { market: "de" } },
            AT: { ...AT, attrs: { market: "at" } },
            CH: { ...CH, attrs: { market: "de" } },
          },
        };
      },
    );
    const de = await worker.dispatch("/market", { country: "DE" });
    const at = await worker.dispatch("/market", { country: "AT" });
    const ch = await worker.dispatch("/market", { country: "CH" });
    const none = await worker.dispatch("/market", { country: "FR" });
    expect([de.body, at.body, ch.body, none.body]).toEqual([
      "market de",
      "market at",
      "market de",
      "market none",
    ]);
    expect(at.headers.get("x-edge-cache")).toBe("MISS");
    expect(ch.headers.get("x-edge-cache")).toBe("HIT");
    expect(none.headers.get("x-edge-cache")).toBe("MISS");
    expect(hits()).toBe(3);
  });

  // Last: it kills fra-1.
  it("after a boost, a shed, a split and a failover move the viewers, the same segments make no new origin fetch", async () => {
    const paths = ["/seg/move-1.ts", "/seg/move-2.ts", "/seg/move-3.ts"];
    for (const p of paths) expect((await worker.dispatch(p, { country: "DE" })).status).toBe(200);
    expect(origins.get("fra-1").hits).toBe(3);
    for (const o of origins.all) {
      o.reset();
      o.respond(videoOrigin(o.name, o.url));
    }

    // A boost moves DE to ams-1.
    await put({ ...DE_ON_FRA, countries: { DE: { chain: ["ams-1"], source: "boost/DE" } } });
    for (const p of paths) {
      const res = await worker.dispatch(p, { country: "DE" });
      expect(res.headers.get("x-edge-pool")).toBe("ams-1");
      expect(res.headers.get("x-edge-cache")).toBe("HIT");
      expect(res.body).toBe(segmentBody(p));
    }
    // A shed step (§9): slow fra-1 keeps half of DE's viewers, the other half move to ams-1.
    await put(DE_ON_FRA, (m) => {
      const de = m.countries.DE;
      if (!de) throw new Error("no DE");
      return { ...m, countries: { DE: shedRoute(de, new Map([["fra-1", 50]])) } };
    });
    const shedTo = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const p = paths[i % paths.length] ?? "";
      const res = await worker.dispatch(p, {
        country: "DE",
        headers: { "CF-Connecting-IP": `203.0.113.${i + 1}` },
      });
      expect(res.headers.get("x-edge-shed")).toBe("fra-1:50");
      expect(res.headers.get("x-edge-cache")).toBe("HIT");
      expect(res.body).toBe(segmentBody(p));
      shedTo.add(res.headers.get("x-edge-pool") ?? "");
    }
    expect(shedTo).toEqual(new Set(["fra-1", "ams-1"]));
    // A weighted split across three pools: viewers land on each.
    const split: MapSpec = {
      ...DE_ON_FRA,
      countries: { DE: { chain: ["fra-1", "ams-1", "par-1"], source: "country/DE" } },
    };
    await put(split, (m) => {
      const de = m.countries.DE;
      if (!de) throw new Error("no DE");
      const weights = [
        { pool: "fra-1", weight: 34 },
        { pool: "ams-1", weight: 33 },
        { pool: "par-1", weight: 33 },
      ];
      return { ...m, countries: { DE: { ...de, weights } } };
    });
    const pools = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const p = paths[i % paths.length] ?? "";
      const res = await worker.dispatch(p, {
        country: "DE",
        headers: { "CF-Connecting-IP": `198.51.100.${i + 1}` },
      });
      pools.add(res.headers.get("x-edge-pool") ?? "");
      expect(res.headers.get("x-edge-cache")).toBe("HIT");
    }
    expect(pools.size).toBe(3);
    // A failover: fra-1 is killed, and the map still routes DE to it first.
    await put(DE_ON_FRA);
    await origins.get("fra-1").kill();
    for (const p of paths) {
      const res = await worker.dispatch(p, { country: "DE" });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-edge-cache")).toBe("HIT");
    }
    expect(hits()).toBe(0);
  });
});
