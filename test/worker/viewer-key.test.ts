import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  compile,
  desiredStateToKeys,
  formatSplit,
  type Route,
  resolveRoute,
  validateDesiredState,
} from "../../core/index.js";
import { splitHeader, splitRoute } from "../../worker/split.js";
import { affinityCookieName, viewerKey } from "../../worker/viewer-key.js";

const req = (headers: Record<string, string>) => new Request("https://edge.test/", { headers });

describe("viewer key (docs/reference.md §4.3)", () => {
  it("uses CF-Connecting-IP by default, the affinity cookie when set and present", () => {
    const h = { "CF-Connecting-IP": "192.0.2.1", Cookie: "a=1; sid=abc" };
    expect(viewerKey(req(h), null, false)).toBe("192.0.2.1");
    expect(viewerKey(req(h), "sid", false)).toBe("abc");
    expect(viewerKey(req(h), "other", false)).toBe("192.0.2.1");
    expect(viewerKey(req({ Cookie: "sid=", "CF-Connecting-IP": "192.0.2.1" }), "sid", false)).toBe(
      "192.0.2.1",
    );
    expect(viewerKey(req({}), null, false)).toBe("");
  });
  it("honours X-Edge-Debug-Viewer only with debug access, and cuts long keys", () => {
    const h = { "CF-Connecting-IP": "192.0.2.1", "X-Edge-Debug-Viewer": "v-9" };
    expect(viewerKey(req(h), null, true)).toBe("v-9");
    expect(viewerKey(req(h), null, false)).toBe("192.0.2.1");
    expect(viewerKey(req({ "X-Edge-Debug-Viewer": "x".repeat(1000) }), null, true)).toHaveLength(
      256,
    );
  });
  it.each([
    ["sid", "sid"],
    ["__Host-session", "__Host-session"],
    ["", null],
    ["a b", null],
    ["a;b", null],
  ])("AFFINITY_COOKIE %j → %j", (raw, want) => {
    expect(affinityCookieName(raw)).toBe(want);
  });
});

describe("splitRoute", () => {
  const link = (pool: string) => ({ pool, origin: `https://${pool}.example.net` });
  const route: Route = {
    pool: "fra-1",
    origin: "https://fra-1.example.net",
    chain: [link("fra-1"), link("ams-1"), link("par-1")],
    source: "country/DE",
    degraded: null,
    weights: [
      { pool: "fra-1", weight: 1 },
      { pool: "ams-1", weight: 1000 },
    ],
  };
  it("puts the picked pool first and keeps the rest in failover order", () => {
    const keys = Array.from({ length: 50 }, (_, i) => `k${i}`);
    const moved = keys.map((k) => splitRoute(route, k)).find((r) => r.pool === "ams-1");
    expect(moved?.chain.map((c) => c.pool)).toEqual(["ams-1", "fra-1", "par-1"]);
    expect(moved?.origin).toBe("https://ams-1.example.net");
    expect(moved?.weights).toEqual(route.weights);
  });
  it("leaves unweighted routes alone and ignores weighted pools outside the chain", () => {
    const { weights: _w, ...plain } = route;
    expect(splitRoute(plain, "k")).toBe(plain);
    const odd = { ...route, weights: [{ pool: "lon-1", weight: 5 }] };
    expect(splitRoute(odd, "k")).toBe(odd);
  });
  it("builds each pick's route once per map route: the hot path allocates nothing", () => {
    const keys = Array.from({ length: 200 }, (_, i) => `v${i}`);
    const first = keys.map((k) => splitRoute(route, k));
    const again = keys.map((k) => splitRoute(route, k));
    for (const [i, r] of first.entries()) expect(again[i]).toBe(r);
    expect(new Set(first.filter((r) => r !== route)).size).toBe(1);
    expect(splitHeader(route.weights ?? [])).toBe("fra-1:0,ams-1:100");
    expect(splitHeader(route.weights ?? [])).toBe(formatSplit(route.weights ?? []));
  });
});

describe("examples/routing.yaml", () => {
  it("is valid and shows a continent rule and a weighted rule", () => {
    const doc: unknown = parse(
      readFileSync(new URL("../../examples/routing.yaml", import.meta.url), "utf8"),
    );
    const v = validateDesiredState(doc);
    if (!v.ok) throw new Error(JSON.stringify(v.problems));
    const entries = [...desiredStateToKeys(v.state, "/x/")].map(([key, value]) => ({ key, value }));
    for (const p of Object.keys(v.state.pools))
      entries.push({ key: `/x/health/${p}`, value: '{"status":"healthy"}' });
    const { map } = compile(
      { revision: 1, entries },
      {
        carried: null,
        prefix: "/x/",
        floorPool: "par-1",
        originTemplate: "https://{pool}.x",
        now: new Date(),
      },
    );
    expect(map.problems).toEqual([]);
    expect(resolveRoute(map, "IT").source).toBe("continent/EU");
    expect(resolveRoute(map, "DE").weights).toEqual([
      { pool: "fra-1", weight: 80 },
      { pool: "ams-1", weight: 20 },
    ]);
  });
});
