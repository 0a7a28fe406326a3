import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import {
  FORWARDING,
  type Origins,
  type ReceivedRequest,
  selfReferencing,
  startOrigins,
} from "../../testkit/origins.js";
import { type EdgeResponse, startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

const TOKEN = "hygiene-token";
const BASE_MAP: MapSpec = {
  default: { chain: ["ams-1"], source: "country/_default" },
  countries: { DE: { chain: ["fra-1", "ams-1"], source: "country/DE" } },
};
const SPOOFED = {
  "X-Forwarded-For": "6.6.6.6",
  "X-Forwarded-Host": "evil.example",
  "X-Forwarded-Proto": "gopher",
  "X-Forwarded-Port": "31337",
  "X-Forwarded-Server": "evil",
  Forwarded: "for=6.6.6.6;host=evil.example;proto=http",
  "X-Real-IP": "6.6.6.6",
  "True-Client-IP": "6.6.6.6",
};

function headerText(res: EdgeResponse): string {
  return [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
}

describe("forwarding headers toward origins", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    worker = await startWorker({ DEBUG_TOKEN: TOKEN });
    await worker.putMap(
      serializeMap(buildMap(BASE_MAP, { rev: 3, originOf: (p) => origins.get(p).url })),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it("replaces every client forwarding claim with the edge's own", async () => {
    const res = await worker.dispatch("/seg.ts", {
      country: "DE",
      headers: { ...SPOOFED, "CF-Connecting-IP": "203.0.113.7" },
    });
    const fwd = res.json<ReceivedRequest>().headers;
    expect(fwd["x-forwarded-for"]).toBe("203.0.113.7");
    expect(fwd["x-forwarded-host"]).toBe("edge.test");
    expect(fwd["x-forwarded-proto"]).toBe("http");
    for (const name of ["x-forwarded-port", "x-forwarded-server", "forwarded", "x-real-ip"]) {
      expect({ name, value: fwd[name] }).toEqual({ name, value: undefined });
    }
    expect(fwd["true-client-ip"]).toBeUndefined();
    expect(JSON.stringify(fwd)).not.toContain("6.6.6.6");
    expect(JSON.stringify(fwd)).not.toContain("evil");
  });

  it("removes every spelling a CGI origin reads as a claim or an X-Edge-* header", async () => {
    const spoofed = {
      X_Forwarded_For: "6.6.6.6",
      "x-forwarded_host": "evil.example",
      "X-Real_IP": "6.6.6.6",
      TRUE_CLIENT_IP: "6.6.6.6",
      X_Edge_Country: "KP",
      "X_EDGE-ATTR-TIER": "platinum",
      X_Edge_Debug_Token: TOKEN,
      CF_Connecting_IP: "6.6.6.6",
    };
    const res = await worker.dispatch("/seg.ts", {
      country: "DE",
      headers: { ...spoofed, X_Request_Tag: "kept", "CF-Connecting-IP": "203.0.113.7" },
    });
    const fwd = res.json<ReceivedRequest>().headers;
    const underscored = Object.keys(fwd).filter((name) => name.includes("_"));
    expect(underscored).toEqual(["x_request_tag"]);
    expect(fwd["x-forwarded-for"]).toBe("203.0.113.7");
    expect(fwd["x-edge-country"]).toBe("DE");
    expect(JSON.stringify(fwd)).not.toMatch(/6\.6\.6\.6|evil|KP|platinum|hygiene-token/);
  });

  it("sends no X-Forwarded-For at all without CF-Connecting-IP (never the client's)", async () => {
    const res = await worker.dispatch("/", { country: "DE", headers: SPOOFED });
    const fwd = res.json<ReceivedRequest>().headers;
    expect(fwd["x-forwarded-for"] ?? "").not.toContain("6.6.6.6");
    expect(fwd["x-forwarded-host"]).toBe("edge.test");
  });

  it("does the same on a failover attempt and for a POST", async () => {
    origins.get("fra-1").failWith(503);
    try {
      const get = await worker.dispatch("/", {
        country: "DE",
        headers: { ...SPOOFED, "CF-Connecting-IP": "198.51.100.2" },
      });
      expect(get.json<ReceivedRequest>().origin).toBe("ams-1");
      expect(get.json<ReceivedRequest>().headers["x-forwarded-for"]).toBe("198.51.100.2");
    } finally {
      origins.get("fra-1").failWith(null);
    }
    const post = await worker.dispatch("/api", {
      country: "DE",
      method: "POST",
      body: "x",
      headers: { ...SPOOFED, "CF-Connecting-IP": "198.51.100.3" },
    });
    expect(post.json<ReceivedRequest>().headers["x-forwarded-for"]).toBe("198.51.100.3");
    expect(post.json<ReceivedRequest>().headers["x-real-ip"]).toBeUndefined();
  });
});

describe("origins that name themselves in their response headers", () => {
  let origins: Origins;
  let worker: TestWorker;
  const originOf = (p: string) => origins.get(p).url;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "par-1"]);
    worker = await startWorker({ DEBUG_TOKEN: TOKEN });
    await worker.putMap(serializeMap(buildMap(BASE_MAP, { rev: 8, originOf })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) {
      o.reset();
      o.respond(selfReferencing(o));
    }
  });

  it("rewrites Location, Content-Location, Link and Refresh to the public host", async () => {
    const res = await worker.dispatch("/redirect", { country: "DE" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(
      "http://edge.test/login?next=%2Fx&back=http://edge.test/x",
    );
    expect(res.headers.get("content-location")).toBe("http://edge.test/content/1.m3u8");
    expect(res.headers.get("link")).toBe(
      "<http://edge.test/style.css>; rel=preload; as=style, <//edge.test/font.woff2>; rel=preload, </rel.js>; rel=preload",
    );
    expect(res.headers.get("refresh")).toBe("5; url=http://edge.test/refresh");
    // The edge still never follows a redirect itself.
    expect(origins.get("fra-1").hits).toBe(1);
  });

  it("rewrites a URL naming another origin of the map, in any case", async () => {
    const ams = origins.get("ams-1");
    origins.get("fra-1").respond(() => ({
      status: 301,
      headers: { location: `${ams.url.toUpperCase()}/elsewhere?q=1#f` },
    }));
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("location")).toBe("http://edge.test/elsewhere?q=1#f");
  });

  it("rewrites origin URLs that only the URL parser reads as the origin's (in workerd)", async () => {
    const fra = origins.get("fra-1");
    const authority = `127.0.0.1:${fra.port}`;
    const escapes = [
      `http:///${authority}/a`,
      `///${authority}/b`,
      `http:\\\\\\${authority}/c`,
      `/\t/${authority}/d`,
      `http://127.0.\t0.1:${fra.port}/e`,
      // From the http page edge.test, `https:host/f` is no path: it leaves for the host.
      `https:${authority}/f`,
    ];
    for (const [i, location] of escapes.entries()) {
      fra.respond(() => ({
        status: 302,
        headers: {
          location,
          link: `<${location}>; rel=preload`,
          refresh: `0; url='${location}'`,
        },
      }));
      const res = await worker.dispatch("/", { country: "DE" });
      const path = `/${"abcdef"[i]}`;
      expect({
        location: res.headers.get("location"),
        link: res.headers.get("link"),
        refresh: res.headers.get("refresh"),
      }).toEqual({
        location: `http://edge.test${path}`,
        link: `<http://edge.test${path}>; rel=preload`,
        refresh: `0; url='http://edge.test${path}'`,
      });
    }
  });

  it("leaves URLs elsewhere, relative ones and unrelated headers alone", async () => {
    origins.get("fra-1").respond(() => ({
      status: 302,
      headers: {
        location: "https://cdn.example.net/next?x=1",
        "content-location": "/relative/path",
        link: "<https://fonts.example.org/a.woff2>; rel=preload",
        "x-custom": "kept",
      },
    }));
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.get("location")).toBe("https://cdn.example.net/next?x=1");
    expect(res.headers.get("content-location")).toBe("/relative/path");
    expect(res.headers.get("link")).toBe("<https://fonts.example.org/a.woff2>; rel=preload");
    expect(res.headers.get("x-custom")).toBe("kept");
  });

  it("drops an origin's X-Edge-* headers in any spelling, never beside the edge's own", async () => {
    const fra = origins.get("fra-1");
    fra.respond(() => ({
      status: 200,
      headers: {
        X_Edge_Origin: fra.url,
        x_edge_pool: "evil",
        "X-EDGE_Country": "KP",
        X_Served_Tag: "kept",
      },
    }));
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-country")).toBe("DE");
    expect([...res.headers.keys()].filter((name) => name.includes("_"))).toEqual(["x_served_tag"]);
    expect(headerText(res)).not.toContain("127.0.0.1");
  });

  it("drops a Set-Cookie Domain that names an origin host and keeps the cookies", async () => {
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.getSetCookie()).toEqual([
      "sid=abc; Path=/; HttpOnly",
      "pref=1; Secure",
      "plain=2; Path=/",
    ]);
  });

  it("shows no origin host in any header without the token, on every path through the edge", async () => {
    // As Cloudflare sets it (Miniflare would put the loopback client's 127.0.0.1 here).
    const headers = { "CF-Connecting-IP": "203.0.113.50" };
    const responses = [
      await worker.dispatch("/redirect", { country: "DE", headers }),
      await worker.dispatch("/", { country: "FR", headers }),
      await worker.dispatch("/api", { country: "DE", method: "POST", body: "x", headers }),
      await worker.dispatch("/", { country: "DE", method: "HEAD", headers }),
    ];
    origins.get("fra-1").failWith(503);
    origins.get("fra-1").respond(null);
    responses.push(await worker.dispatch("/redirect", { country: "DE", headers }));
    for (const res of responses) {
      const text = headerText(res);
      expect(text, text).not.toContain("127.0.0.1");
      for (const o of origins.all) expect(text).not.toContain(String(o.port));
      expect(res.headers.get("x-edge-origin")).toBeNull();
    }
    expect(responses[0]?.headers.get("cache-control")).toBe("public, max-age=3600");
  });

  it("with the token: X-Edge-Origin, and then Cache-Control: private, no-store", async () => {
    const res = await worker.dispatch("/", {
      country: "DE",
      headers: { "X-Edge-Debug-Token": TOKEN },
    });
    expect(res.headers.get("x-edge-origin")).toBe(originOf("fra-1"));
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.headers.get("cdn-cache-control")).toBeNull();
    // The debug view still hides the origin in headers the visitor's browser acts on.
    expect(res.headers.get("location")).not.toContain("127.0.0.1");
  });

  it("reflects what reached the origin: only the edge's forwarding headers", async () => {
    const res = await worker.dispatch("/", {
      country: "DE",
      headers: { ...SPOOFED, "CF-Connecting-IP": "203.0.113.9" },
    });
    const seen = Object.fromEntries(FORWARDING.map((n) => [n, res.headers.get(`x-seen-${n}`)]));
    expect(seen).toEqual({
      "x-forwarded-for": "203.0.113.9",
      "x-forwarded-host": "edge.test",
      "x-forwarded-proto": "http",
      "x-forwarded-port": "-",
      forwarded: "-",
      "x-real-ip": "-",
      "true-client-ip": "-",
    });
  });
});

describe("an IPv6 origin naming itself in a non-canonical form", () => {
  let server: Server;
  let worker: TestWorker;
  let port = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      const self = `http://[0:0:0:0:0:0:0:1]:${port}`;
      res.writeHead(302, {
        location: `${self}/login`,
        "content-location": `//[0000::1]:${port}/content`,
        link: `<${self}/a.css>; rel=preload`,
        refresh: `0; url=HTTP://[::0001]:${port}/r`,
        "set-cookie": ["a=1; Domain=0:0:0:0:0:0:0:1; Path=/", "b=2; Domain=[0::1]"],
      });
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "::1", () => r()));
    port = (server.address() as AddressInfo).port;
    worker = await startWorker();
    const spec: MapSpec = { default: { chain: ["v6-1"], source: "country/_default" } };
    await worker.putMap(
      serializeMap(buildMap(spec, { rev: 3, originOf: () => `http://[::1]:${port}` })),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  it("has every URL header rewritten and every cookie domain dropped", async () => {
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.status).toBe(302);
    expect(res.headers.get("x-edge-pool")).toBe("v6-1");
    expect({
      location: res.headers.get("location"),
      contentLocation: res.headers.get("content-location"),
      link: res.headers.get("link"),
      refresh: res.headers.get("refresh"),
      cookies: res.headers.getSetCookie(),
    }).toEqual({
      location: "http://edge.test/login",
      contentLocation: "//edge.test/content",
      link: "<http://edge.test/a.css>; rel=preload",
      refresh: "0; url=http://edge.test/r",
      cookies: ["a=1; Path=/", "b=2"],
    });
    expect(headerText(res)).not.toMatch(/\[[0:]*1\]|0:0:0/);
  });
});
