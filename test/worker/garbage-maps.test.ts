import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { buildMap } from "../cases/routing-cases.js";
import { type Origins, startOrigins } from "../helpers/origins.js";
import { startWorker, type TestWorker } from "../helpers/worker.js";

type Doc = Record<string, unknown>;

/** Garbage `routes` documents, each built from a good one (so only the named flaw differs). */
function garbage(good: string): [string, string][] {
  const g = (): Doc => JSON.parse(good) as Doc;
  const edit = (f: (d: Doc) => void) => {
    const d = g();
    f(d);
    return JSON.stringify(d);
  };
  const route = (d: Doc) => d.default as Doc;
  return [
    ["empty string", ""],
    ["whitespace", "   \n"],
    ["null", "null"],
    ["true", "true"],
    ["a number", "42"],
    ["a string", '"routes"'],
    ["an empty object", "{}"],
    ["an empty array", "[]"],
    ["an array of maps", `[${good}]`],
    ["truncated JSON", good.slice(0, Math.floor(good.length / 2))],
    ["one byte short", good.slice(0, -1)],
    ["a BOM in front", `\uFEFF${good}`],
    ["trailing garbage", `${good}}`],
    ["NUL bytes", "\u0000\u0000"],
    ["deeply nested arrays", "[".repeat(200_000)],
    ["a huge unterminated string", `{"v":1,"x":"${"a".repeat(3_000_000)}`],
    ["v: 2", edit((d) => (d.v = 2))],
    ["rev as a string", edit((d) => (d.rev = String(d.rev)))],
    ["rev negative", edit((d) => (d.rev = -1))],
    ["rev fractional", edit((d) => (d.rev = 1.5))],
    ["no default", edit((d) => delete d.default)],
    ["default null", edit((d) => (d.default = null))],
    ["default an array", edit((d) => (d.default = []))],
    ["countries an array", edit((d) => (d.countries = [d.default]))],
    ["countries null", edit((d) => (d.countries = null))],
    ["a country route as a string", edit((d) => (d.countries = { DE: "fra-1" }))],
    ["an empty chain", edit((d) => (route(d).chain = []))],
    ["chain not an array", edit((d) => (route(d).chain = { pool: "x" }))],
    ["origin not a URL", edit((d) => (route(d).origin = "not a url"))],
    ["pool empty", edit((d) => (route(d).pool = ""))],
    ["pool a number", edit((d) => (route(d).pool = 7))],
    ["degraded unknown", edit((d) => (route(d).degraded = "on-fire"))],
    ["problems a string", edit((d) => (d.problems = "x"))],
  ];
}

describe("garbage routes documents never cause a 500", () => {
  let origins: Origins;
  let worker: TestWorker;
  let good = "";

  beforeAll(async () => {
    origins = await startOrigins(["ams-1", "floor-1"]);
    worker = await startWorker({
      FLOOR_POOL: "floor-1",
      ORIGIN_TEMPLATE: origins.get("floor-1").url,
    });
    good = serializeMap(
      buildMap(
        { default: { chain: ["ams-1"], source: "country/_default" } },
        { rev: 50, originOf: (p) => origins.get(p).url },
      ),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it("before any good map: every garbage document routes to the floor (no-map)", async () => {
    for (const [name, text] of garbage(good)) {
      await worker.putMap(text);
      const res = await worker.dispatch("/", { country: "DE" });
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      expect({ name, degraded: res.headers.get("x-edge-degraded") }).toEqual({
        name,
        degraded: "no-map",
      });
      expect(res.headers.get("x-edge-pool")).toBe("floor-1");
      const health = await worker.dispatch("/__edge/health");
      expect({ name, health: health.json() }).toEqual({ name, health: { ok: true, rev: null } });
    }
  });

  it("after a good map: every garbage document keeps it (stale-map)", async () => {
    await worker.putMap(good);
    expect((await worker.dispatch("/")).headers.get("x-edge-pool")).toBe("ams-1");
    for (const [name, text] of garbage(good)) {
      await worker.putMap(text);
      const res = await worker.dispatch("/", { country: "DE" });
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      expect({ name, degraded: res.headers.get("x-edge-degraded") }).toEqual({
        name,
        degraded: "stale-map",
      });
      expect(res.headers.get("x-edge-pool")).toBe("ams-1");
      expect(res.headers.get("x-edge-revision")).toBe("50");
    }
  });

  it("well-formed but hostile maps: a 200 or a plain 502, never a 500", async () => {
    const base = JSON.parse(good) as Doc;
    const withDefault = (rev: number, origin: string, extra: Doc = {}) =>
      JSON.stringify({
        ...base,
        rev,
        default: { ...(base.default as Doc), origin, chain: [{ pool: "ams-1", origin }] },
        ...extra,
      });
    const cases: [string, string, number][] = [
      ["a non-http origin", withDefault(60, "ftp://files.example.com"), 502],
      ["a javascript: origin", withDefault(61, "javascript:alert(1)"), 502],
      ["a dead loopback origin", withDefault(62, "http://127.0.0.1:1"), 502],
      ["an origin with a path", withDefault(63, `${origins.get("ams-1").url}/some/path?q=1`), 200],
      [
        "__proto__ and constructor countries",
        JSON.stringify({
          ...base,
          rev: 64,
          countries: JSON.parse(
            `{"__proto__":${JSON.stringify(base.default)},"constructor":${JSON.stringify(base.default)}}`,
          ),
        }),
        200,
      ],
      [
        "a huge map (2,000 countries, 1 MB of problems)",
        JSON.stringify({
          ...base,
          rev: 65,
          countries: Object.fromEntries(
            Array.from({ length: 2000 }, (_, i) => [`C${i}`, base.default]),
          ),
          problems: Array.from({ length: 1000 }, () => "p".repeat(1000)),
        }),
        200,
      ],
    ];
    for (const [name, text, status] of cases) {
      await worker.putMap(text);
      const res = await worker.dispatch("/x", { country: "DE" });
      expect({ name, status: res.status }).toEqual({ name, status });
      expect({ name, degraded: res.headers.get("x-edge-degraded") }).toEqual({
        name,
        degraded: null,
      });
      if (status === 502) expect(res.body).not.toContain("127.0.0.1");
      else expect(JSON.parse(res.body)).toMatchObject({ origin: "ams-1", url: "/x" });
    }
  });
});
