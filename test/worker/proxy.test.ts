import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap } from "../cases/routing-cases.js";

const TOKEN = "proxy-test-token";

function edgeHeaderNames(headers: Headers): string[] {
  return [...headers.keys()].filter((k) => k.startsWith("x-edge-")).sort();
}

describe("proxying to the route's origin", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    worker = await startWorker({ DEBUG_TOKEN: TOKEN });
    const map = buildMap(
      {
        default: { chain: ["ams-1"], source: "country/_default" },
        countries: { DE: { chain: ["fra-1", "ams-1"], source: "override/DE" } },
      },
      { rev: 4211, originOf: (p) => origins.get(p).url },
    );
    await worker.putMap(serializeMap(map));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  it("answers with the origin's response and exactly the edge headers", async () => {
    const res = await worker.dispatch("/video/1.m3u8", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-origin-name")).toBe("fra-1");
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(edgeHeaderNames(res.headers)).toEqual([
      "x-edge-cache",
      "x-edge-country",
      "x-edge-pool",
      "x-edge-revision",
      "x-edge-source",
    ]);
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-country")).toBe("DE");
    expect(res.headers.get("x-edge-revision")).toBe("4211");
    expect(res.headers.get("x-edge-source")).toBe("override/DE");
    // The echo names no lifetime: looked up, fetched, not kept.
    expect(res.headers.get("x-edge-cache")).toBe("MISS");
  });

  it("adds X-Edge-Pool/Country/Revision/Hop to the origin request and drops client X-Edge-*", async () => {
    const res = await worker.dispatch("/a", {
      country: "FR",
      headers: {
        "X-Edge-Debug-Token": TOKEN,
        "X-Edge-Debug-Country": "DE",
        "X-Edge-Pool": "evil-1",
        "X-Edge-Custom": "client-said",
        "X-Request-Id": "abc-123",
        Authorization: "Bearer user",
      },
    });
    expect(res.status).toBe(200);
    const seen = res.json<ReceivedRequest>();
    expect(seen.origin).toBe("fra-1");
    const fwd = seen.headers;
    expect(fwd["x-edge-pool"]).toBe("fra-1");
    expect(fwd["x-edge-country"]).toBe("DE");
    expect(fwd["x-edge-revision"]).toBe("4211");
    expect(fwd["x-edge-hop"]).toBe("1");
    expect(fwd["x-edge-debug-token"]).toBeUndefined();
    expect(fwd["x-edge-debug-country"]).toBeUndefined();
    expect(fwd["x-edge-custom"]).toBeUndefined();
    expect(JSON.stringify(fwd)).not.toContain(TOKEN);
    expect(fwd["x-request-id"]).toBe("abc-123");
    expect(fwd.authorization).toBe("Bearer user");
    expect(fwd.host).toBe(`127.0.0.1:${origins.get("fra-1").port}`);
  });

  it("keeps path and query exactly, including a path that looks like a host", async () => {
    for (const path of ["/x/y%20z?b=2&a=1&a=3", "//evil.example/steal?q=%2F", "/?", "/caf%C3%A9"]) {
      const res = await worker.dispatch(path, { country: "DE" });
      expect(res.json<ReceivedRequest>().url).toBe(path);
      expect(res.json<ReceivedRequest>().origin).toBe("fra-1");
    }
  });

  it.each(["POST", "PUT", "PATCH", "DELETE"])("forwards %s with its body", async (method) => {
    const body = JSON.stringify({ method, n: 42, text: "ünïcødé" });
    const res = await worker.dispatch("/upload?id=7", {
      country: "DE",
      method,
      body,
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(200);
    const seen = res.json<ReceivedRequest>();
    expect(seen.method).toBe(method);
    expect(seen.url).toBe("/upload?id=7");
    expect(seen.body).toBe(body);
    expect(seen.headers["content-type"]).toBe("application/json");
  });

  it("answers HEAD without a body", async () => {
    const res = await worker.dispatch("/h", { country: "DE", method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.body).toBe("");
    expect(origins.get("fra-1").requests[0]?.method).toBe("HEAD");
  });

  it("passes an origin redirect through untouched and never follows it", async () => {
    origins.get("fra-1").respond(() => ({
      status: 302,
      headers: { Location: "https://cdn.example.net/next?x=1", "Set-Cookie": "s=1; Path=/" },
      body: "moved",
    }));
    const res = await worker.dispatch("/old", { country: "DE" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://cdn.example.net/next?x=1");
    expect(res.headers.get("set-cookie")).toBe("s=1; Path=/");
    expect(res.body).toBe("moved");
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(origins.get("fra-1").hits).toBe(1);
    expect(origins.get("ams-1").hits).toBe(0);
  });

  it("strips X-Edge-* headers the origin sent and sets its own", async () => {
    origins.get("fra-1").respond(() => ({
      status: 200,
      headers: {
        "X-Edge-Origin": "http://10.0.0.1:9000",
        "X-Edge-Pool": "fake-1",
        "X-Edge-Internal": "secret",
      },
      body: "ok",
    }));
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.get("x-edge-origin")).toBeNull();
    expect(res.headers.get("x-edge-internal")).toBeNull();
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
  });

  it("answers 508 to a request that already carries X-Edge-Hop, without proxying", async () => {
    for (const method of ["GET", "POST"]) {
      const res = await worker.dispatch("/loop", {
        country: "DE",
        method,
        headers: { "X-Edge-Hop": "1" },
      });
      expect(res.status).toBe(508);
    }
    expect(origins.get("fra-1").hits + origins.get("ams-1").hits).toBe(0);
  });

  it("serves concurrent requests that share one map read", async () => {
    const all = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        worker.dispatch(`/c/${i}`, { country: i % 2 ? "DE" : "FR" }),
      ),
    );
    all.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(res.json<ReceivedRequest>().url).toBe(`/c/${i}`);
      expect(res.headers.get("x-edge-pool")).toBe(i % 2 ? "fra-1" : "ams-1");
    });
  });

  it("keeps the /__edge/ namespace to itself", async () => {
    const res = await worker.dispatch("/__edge/anything", { country: "DE" });
    expect(res.status).toBe(404);
    expect(origins.get("fra-1").hits).toBe(0);
  });

  it("draws the namespace's edge where Hono reads the path: bare, trailing slash, percent-encoded", async () => {
    // Hono decides which paths are the edge's (its own path reading): these pin that boundary.
    for (const path of ["/__edge", "/__edge/health/x", "/%5F_edge/anything", "/__ed%67e/route"]) {
      const res = await worker.dispatch(path, { country: "DE", method: "POST", body: "x" });
      expect(res.status, path).toBe(404);
    }
    expect((await worker.dispatch("/__edge/health/", { country: "DE" })).status).toBe(200);
    expect(origins.get("fra-1").hits).toBe(0);
    for (const path of ["/__edgex", "/x/__edge/route", "/__EDGE/route"]) {
      const res = await worker.dispatch(path, { country: "DE" });
      expect(res.status, path).toBe(200);
      expect(res.json<ReceivedRequest>().url, path).toBe(path);
    }
    expect(origins.get("fra-1").hits).toBe(3);
  });
});
