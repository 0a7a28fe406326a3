import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { type EdgeResponse, startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

const TOKEN = "correct-horse-battery-staple";
const BASE_MAP: MapSpec = {
  default: { chain: ["ams-1", "par-1"], source: "country/_default" },
  countries: {
    DE: { chain: ["fra-1", "ams-1"], source: "country/DE" },
    FR: { chain: ["par-1"], source: "country/FR" },
  },
};

/** Everything a client can see of a response. */
function visible(res: EdgeResponse): string {
  return `${res.status}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n\n${res.body}`;
}

describe("debug token and country", () => {
  let origins: Origins;
  let worker: TestWorker;
  const originOf = (p: string) => origins.get(p).url;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "par-1"]);
    worker = await startWorker({ DEBUG_TOKEN: TOKEN });
    await worker.putMap(serializeMap(buildMap(BASE_MAP, { rev: 31, originOf })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) {
      o.reset();
      // A body that cannot echo the Host header back: what leaks is the edge's doing.
      o.respond(() => ({ status: 200, headers: { "content-type": "text/plain" }, body: o.name }));
    }
  });

  it("routes by request.cf.country and ignores a spoofed CF-IPCountry", async () => {
    const res = await worker.dispatch("/", { country: "FR", headers: { "CF-IPCountry": "DE" } });
    expect(res.headers.get("x-edge-country")).toBe("FR");
    expect(res.headers.get("x-edge-pool")).toBe("par-1");
  });

  it("ignores X-Edge-Debug-Country without a token", async () => {
    const res = await worker.dispatch("/", {
      country: "FR",
      headers: { "X-Edge-Debug-Country": "DE" },
    });
    expect(res.headers.get("x-edge-country")).toBe("FR");
    expect(res.headers.get("x-edge-origin")).toBeNull();
  });

  it.each([
    ["an empty token", ""],
    ["a wrong token of the same length", TOKEN.replace(/.$/, "X")],
    ["a prefix of the token", TOKEN.slice(0, 10)],
    ["the token plus more", `${TOKEN}x`],
    ["the token in another case", TOKEN.toUpperCase()],
  ])("ignores debug headers with %s", async (_name, token) => {
    const res = await worker.dispatch("/", {
      country: "FR",
      headers: { "X-Edge-Debug-Token": token, "X-Edge-Debug-Country": "DE" },
    });
    expect(res.headers.get("x-edge-country")).toBe("FR");
    expect(res.headers.get("x-edge-pool")).toBe("par-1");
    expect(res.headers.get("x-edge-origin")).toBeNull();
  });

  it("with the token: X-Edge-Debug-Country overrides and X-Edge-Origin is shown", async () => {
    const res = await worker.dispatch("/", {
      country: "FR",
      headers: { "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Country": "de" },
    });
    expect(res.headers.get("x-edge-country")).toBe("DE");
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-origin")).toBe(originOf("fra-1"));
    expect(res.body).toBe("fra-1");
  });

  it("with the token but no debug country: cf.country still decides", async () => {
    const res = await worker.dispatch("/", {
      country: "DE",
      headers: { "X-Edge-Debug-Token": TOKEN },
    });
    expect(res.headers.get("x-edge-country")).toBe("DE");
    expect(res.headers.get("x-edge-origin")).toBe(originOf("fra-1"));
  });

  it("GET /__edge/route with the token shows the decision and proxies nothing", async () => {
    const res = await worker.dispatch("/__edge/route", {
      country: "FR",
      headers: { "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Country": "DE" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json()).toEqual({
      country: "DE",
      rev: 31,
      epoch: 1,
      map: "fresh",
      degraded: null,
      route: {
        pool: "fra-1",
        origin: originOf("fra-1"),
        chain: [
          { pool: "fra-1", origin: originOf("fra-1") },
          { pool: "ams-1", origin: originOf("ams-1") },
        ],
        source: "country/DE",
        degraded: null,
      },
    });
    expect(origins.all.reduce((n, o) => n + o.hits, 0)).toBe(0);
  });

  it("GET /__edge/health shows the revision and no origin", async () => {
    const res = await worker.dispatch("/__edge/health", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ ok: true, rev: 31 });
    expect(origins.all.reduce((n, o) => n + o.hits, 0)).toBe(0);
  });

  it("never shows an origin to a client without the token", async () => {
    const bad = { "X-Edge-Debug-Token": "nope", "X-Edge-Debug-Country": "DE" };
    const responses: EdgeResponse[] = [];
    for (const path of ["/", "/__edge/route", "/__edge/health", "/__edge/", "/__edge/route?x=1"]) {
      responses.push(await worker.dispatch(path, { country: "DE" }));
      responses.push(await worker.dispatch(path, { country: "DE", headers: bad }));
    }
    responses.push(await worker.dispatch("/", { country: "DE", headers: { "X-Edge-Hop": "1" } }));
    origins.get("fra-1").respond(() => ({ status: 503, body: "down" }));
    responses.push(await worker.dispatch("/", { country: "DE" }));
    await origins.get("par-1").kill();
    responses.push(await worker.dispatch("/", { country: "FR" }));
    responses.push(await worker.dispatch("/", { country: "FR", method: "POST", body: "x" }));

    expect(responses.find((r) => r.status === 502)).toBeDefined();
    for (const res of responses) {
      expect(res.headers.get("x-edge-origin")).toBeNull();
      const seen = visible(res);
      for (const o of origins.all) expect(seen).not.toContain(String(o.port));
      expect(seen).not.toContain("127.0.0.1");
      expect(seen).not.toContain(TOKEN);
    }
    for (const path of ["/__edge/route", "/__edge/route?x=1"]) {
      const res = await worker.dispatch(path, { country: "DE", headers: bad });
      expect(res.status).toBe(404);
    }
  });
});

describe("DEBUG_TOKEN unset", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "par-1"]);
    worker = await startWorker({});
    await worker.putMap(
      serializeMap(buildMap(BASE_MAP, { rev: 1, originOf: (p) => origins.get(p).url })),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it.each(["", "undefined", "null"])("debug features stay off for token %j", async (token) => {
    const headers = { "X-Edge-Debug-Token": token, "X-Edge-Debug-Country": "DE" };
    const res = await worker.dispatch("/", { country: "FR", headers });
    expect(res.headers.get("x-edge-country")).toBe("FR");
    expect(res.headers.get("x-edge-origin")).toBeNull();
    const route = await worker.dispatch("/__edge/route", { country: "FR", headers });
    expect(route.status).toBe(404);
  });
});
