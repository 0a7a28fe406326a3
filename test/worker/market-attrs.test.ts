import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type CompiledMap, serializeMap, verifyEdgeSignature } from "../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap } from "../cases/routing-cases.js";

const TOKEN = "attrs-test-token";

describe("market attributes through workerd", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    worker = await startWorker({ DEBUG_TOKEN: TOKEN, ORIGIN_SIGNING_KEY: "k" });
    const base = buildMap(
      {
        default: { chain: ["ams-1"], source: "country/_default" },
        countries: { DE: { chain: ["fra-1", "ams-1"], source: "country/DE" } },
      },
      { rev: 31, originOf: (p) => origins.get(p).url },
    );
    const de = base.countries.DE;
    if (!de) throw new Error("no DE");
    const map: CompiledMap = {
      ...base,
      countries: {
        DE: {
          ...de,
          attrs: { "cdn-host": "cdn-eu.example.com", tier: "  gold plus  ", tokenizer: "de" },
        },
      },
    };
    await worker.putMap(serializeMap(map));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  it("sends the route's attrs to the origin as X-Edge-Attr-*, signed, and never to the viewer", async () => {
    const res = await worker.dispatch("/v/1", { country: "DE" });
    expect(res.status).toBe(200);
    const seen = res.json<ReceivedRequest>();
    expect(seen.headers["x-edge-attr-tokenizer"]).toBe("de");
    expect(seen.headers["x-edge-attr-cdn-host"]).toBe("cdn-eu.example.com");
    // A header value carries no leading or trailing space: the signature covers what arrives.
    expect(seen.headers["x-edge-attr-tier"]).toBe("gold plus");
    const received = new Request(`http://${seen.headers.host}${seen.url}`, {
      headers: Object.entries(seen.headers),
    });
    expect(await verifyEdgeSignature(received, ["k"])).toBe(true);
    // The signature covers them: an attribute changed on the way fails.
    const altered = new Request(received, {
      headers: { ...seen.headers, "x-edge-attr-tokenizer": "en" },
    });
    expect(await verifyEdgeSignature(altered, ["k"])).toBe(false);
    expect([...res.headers.keys()].filter((h) => h.startsWith("x-edge-attr-"))).toEqual([]);
  });

  it("drops a client's X-Edge-Attr-* headers: spoofed attributes never reach an origin", async () => {
    const res = await worker.dispatch("/v/1", {
      country: "DE",
      headers: { "X-Edge-Attr-Tokenizer": "evil", "X-Edge-Attr-Tier": "platinum" },
    });
    const seen = res.json<ReceivedRequest>();
    expect(seen.headers["x-edge-attr-tokenizer"]).toBe("de");
    expect(seen.headers["x-edge-attr-tier"]).toBe("gold plus");
    // A route without attrs sends none, whatever the client sent.
    const other = await worker.dispatch("/v/1", {
      country: "FR",
      headers: { "X-Edge-Attr-Tier": "platinum" },
    });
    const otherSeen = other.json<ReceivedRequest>();
    expect(Object.keys(otherSeen.headers).filter((h) => h.startsWith("x-edge-attr-"))).toEqual([]);
  });

  it("/__edge/route shows the attrs with the debug token only", async () => {
    const res = await worker.dispatch("/__edge/route", {
      country: "DE",
      headers: { "X-Edge-Debug-Token": TOKEN },
    });
    expect(res.status).toBe(200);
    expect(res.json<{ route: { attrs?: unknown } }>().route.attrs).toEqual({
      "cdn-host": "cdn-eu.example.com",
      tier: "  gold plus  ",
      tokenizer: "de",
    });
    const without = await worker.dispatch("/__edge/route", { country: "DE" });
    expect(without.status).toBe(404);
    expect(without.body).not.toContain("tokenizer");
  });
});
