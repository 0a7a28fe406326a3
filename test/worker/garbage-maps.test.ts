import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { mapShapeCases } from "../cases/map-shape-cases.js";
import { buildMap } from "../cases/routing-cases.js";

type Doc = Record<string, unknown>;

/** The shared table's documents that are not compiled maps (test/cases/map-shape-cases.ts). */
function garbage(good: string): [string, string][] {
  return mapShapeCases(good)
    .filter((c) => c.verdict.kind === "rejected")
    .map((c) => [c.name, c.text]);
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

  it("a newer map with CR/LF in a header-bound string keeps the good one (stale-map)", async () => {
    await worker.putMap(good);
    const base = JSON.parse(good) as Doc;
    const def = base.default as Doc;
    const hostile: [string, Doc][] = [
      ["source", { ...def, source: "country/_default\r\nSet-Cookie: s=1" }],
      ["pool", { ...def, pool: "ams-1\r\nX-Evil: 1" }],
    ];
    for (const [field, route] of hostile) {
      await worker.putMap(JSON.stringify({ ...base, rev: 55, default: route }));
      const res = await worker.dispatch("/x", { country: "DE" });
      expect({ field, status: res.status }).toEqual({ field, status: 200 });
      expect(res.headers.get("x-edge-degraded")).toBe("stale-map");
      expect(res.headers.get("x-edge-revision")).toBe("50");
      expect(res.headers.get("x-edge-source")).toBe("country/_default");
      expect(res.headers.get("x-evil")).toBeNull();
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    await worker.putMap(JSON.stringify({ ...base, rev: 56 }));
    const res = await worker.dispatch("/x", { country: "DE" });
    expect(res.headers.get("x-edge-revision")).toBe("56");
    expect(res.headers.get("x-edge-degraded")).toBeNull();
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

  it("the shared table's odd but valid maps route, weights dropped where malformed", async () => {
    for (const c of mapShapeCases(good)) {
      if (c.verdict.kind !== "accepted") continue;
      await worker.putMap(c.text);
      const res = await worker.dispatch("/x", { country: "DE" });
      expect({
        name: c.name,
        status: res.status,
        rev: res.headers.get("x-edge-revision"),
        degraded: res.headers.get("x-edge-degraded"),
        pool: res.headers.get("x-edge-pool"),
        split: res.headers.has("x-edge-split"),
        shed: res.headers.get("x-edge-shed"),
      }).toEqual({
        name: c.name,
        status: 200,
        rev: String(c.verdict.rev),
        degraded: c.verdict.degraded,
        pool: "ams-1",
        split: c.verdict.weighted,
        shed:
          c.verdict.shed === null
            ? null
            : `ams-1:${c.verdict.shed}${c.verdict.shedBy ? `;by=${c.verdict.shedBy}` : ""}`,
      });
      expect(JSON.parse(res.body)).toMatchObject({ origin: "ams-1", url: "/x" });
    }
  });
});
