import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COUNTRY_CODES, compile, type Route } from "../../../core/index.js";
import { ASSETS_DIR, buildUiAssets } from "../../../pusher/ui/build/build-assets.js";
import { projectWorld } from "../../../pusher/ui/build/world-map.js";
import { poolCounts, routeFor } from "../../../pusher/ui/page/model.js";
import { assignColours, mute, POOL_COLOURS } from "../../../pusher/ui/page/palette.js";
import { loadUiAssets } from "../../../pusher/ui/ui-assets.js";
import { toUiMap } from "../../../pusher/ui/ui-document.js";
import { opts, snap } from "../../helpers/snapshot.js";

describe("the /ui assets", () => {
  it("committed assets are what the builder makes from the packages (else: npx tsx pusher/ui/build/build-assets.ts)", async () => {
    const built = await buildUiAssets();
    for (const [name, text] of Object.entries(built)) {
      expect(readFileSync(`${ASSETS_DIR}${name}`, "utf8"), name).toBe(text);
    }
  }, 60_000);

  it("maps world-atlas's ISO numeric ids to alpha-2 and gives small countries a dot", () => {
    const world = projectWorld();
    const codes = new Set(world.shapes.map((s) => s.cc).filter((c): c is string => c !== null));
    for (const cc of ["DE", "BR", "US", "JP", "AU", "FR", "IN", "ZA"])
      expect(codes.has(cc), cc).toBe(true);
    expect(codes.size).toBeGreaterThan(225);
    for (const cc of codes) expect(COUNTRY_CODES.has(cc), cc).toBe(true);
    const dots = new Set(world.shapes.filter((s) => s.dot).map((s) => s.cc));
    for (const cc of ["SG", "HK", "MT", "MC", "LU"]) expect(dots.has(cc), cc).toBe(true);
    for (const cc of ["DE", "BR", "US"]) expect(dots.has(cc), cc).toBe(false);
    expect(world.width).toBe(1000);
    expect(world.height).toBeGreaterThan(400);
  });

  it("the page lists all 252 rule targets and embeds no `</script>`", () => {
    const assets = loadUiAssets();
    const html = assets.get("/ui")?.body.toString() ?? "";
    const json = /<script type="application\/json" id="ui-countries">(.*?)<\/script>/s.exec(html);
    const rows = JSON.parse(json?.[1] ?? "[]") as { cc: string; name: string }[];
    expect(rows).toHaveLength(252);
    expect(rows[0]?.cc).toBe("_default");
    expect(new Set(rows.map((r) => r.cc)).size).toBe(252);
    expect(rows.find((r) => r.cc === "DE")?.name).toBe("Germany");
    expect(rows.find((r) => r.cc === "T1")?.name).toBe("Tor network");
    expect(html.match(/<\/script>/g)).toHaveLength(2);
  });
});

describe("the page's colours and routes", () => {
  it("gives up to ten pools distinct colours, stable whatever other pools exist", () => {
    const pools = ["fra-1", "ams-1", "par-1", "sgp-1", "iad-1", "gru-1", "syd-1", "nrt-1"];
    const colours = assignColours(pools);
    expect(new Set([...colours.values()].map((c) => c.colour)).size).toBe(pools.length);
    for (const c of colours.values()) {
      expect(POOL_COLOURS).toContain(c.colour);
      expect(c.muted).toBe(mute(c.colour));
      expect(c.muted).not.toBe(c.colour);
    }
    // A pool's colour does not depend on the order pools arrive in, nor on health.
    expect(assignColours([...pools].reverse())).toEqual(colours);
    // A pool's colour is its name's, not its position's: alone, or among others, it is the same
    // unless another pool hashed to its slot.
    for (const p of ["ams-1", "nrt-1", "par-1"]) {
      expect(assignColours([p]).get(p)).toEqual(colours.get(p));
    }
  });

  it("routes a country like the Worker: its own route, else the default (muted); counts per pool", () => {
    const snapshot = snap({
      "pool/fra-1": { origin: "https://fra-1.example.net" },
      "pool/ams-1": { origin: "https://ams-1.example.net" },
      "health/fra-1": { status: "healthy" },
      "health/ams-1": { status: "healthy" },
      "country/_default": { primary: "ams-1", fallbacks: [] },
      "country/DE": { primary: "fra-1", fallbacks: ["ams-1"] },
      "country/JP": { primary: "sgp-1", fallbacks: [] },
    });
    const result = compile(snapshot, opts());
    const map = toUiMap(result, "par-1");
    expect(routeFor(map, "DE")).toEqual({
      route: { pool: "fra-1", chain: ["fra-1", "ams-1"], source: "country/DE", degraded: null },
      onDefault: false,
    });
    expect(routeFor(map, "BR").onDefault).toBe(true);
    expect(routeFor(map, "BR").route.pool).toBe("ams-1");
    // sgp-1 is named but undefined: JP keeps no route of its own, and the pool is listed as such.
    expect(map.pools.find((p) => p.name === "sgp-1")).toEqual({
      name: "sgp-1",
      health: "missing",
      defined: false,
    });
    expect(map.pools.find((p) => p.name === "par-1")?.health).toBe("missing");
    const counts = poolCounts(map, ["_default", ...COUNTRY_CODES]);
    expect(counts.get("fra-1")).toBe(1);
    expect(counts.get("ams-1")).toBe(COUNTRY_CODES.size - 1);
    expect(JSON.stringify(map)).not.toContain("example.net");
  });

  it("passes a weighted route's weights through (SPEC §3.5), and nothing else of the route", () => {
    const result = compile(
      snap({
        "pool/fra-1": { origin: "https://fra-1.example.net" },
        "health/fra-1": { status: "healthy" },
        "country/_default": { primary: "fra-1", fallbacks: [] },
      }),
      opts(),
    );
    const weighted = {
      ...result.map.default,
      weights: [
        { pool: "fra-1", weight: 80 },
        { pool: "ams-1", weight: 20 },
      ],
    } as Route;
    const map = toUiMap(
      { ...result, map: { ...result.map, countries: { DE: weighted } } },
      "par-1",
    );
    expect(map.countries.DE?.weights).toEqual([
      { pool: "fra-1", weight: 80 },
      { pool: "ams-1", weight: 20 },
    ]);
    expect(Object.keys(map.countries.DE ?? {})).toEqual([
      "pool",
      "chain",
      "source",
      "degraded",
      "weights",
    ]);
    expect(map.default.weights).toBeUndefined();
  });
});

describe("slow pools in the page's data (docs/reference.md §9)", () => {
  it("marks a shedding pool with its share, watermarks and checkers, and the route with its shed", () => {
    const slow = { low: 800, high: 2000 };
    const result = compile(
      snap({
        "pool/fra-1": { origin: "https://fra-1.example.net", slow_ms: slow },
        "pool/ams-1": { origin: "https://ams-1.example.net", slow_ms: slow },
        "health/fra-1/a": { status: "healthy", p90_ms: 1400 },
        "health/fra-1/b": { status: "healthy", p90_ms: 1500 },
        "health/fra-1/c": { status: "unhealthy" },
        "health/ams-1": { status: "healthy", p90_ms: 300 },
        "country/_default": { primary: "ams-1", fallbacks: [] },
        "country/DE": { primary: "fra-1", fallbacks: ["ams-1"] },
      }),
      opts(),
    );
    const map = toUiMap(result, "par-1");
    expect(map.pools.find((p) => p.name === "fra-1")).toEqual({
      name: "fra-1",
      health: "healthy",
      defined: true,
      p90_ms: 1450,
      shed: 50,
      slow_ms: slow,
      checkers: { live: 3, healthy: 2 },
    });
    expect(map.pools.find((p) => p.name === "ams-1")).toEqual({
      name: "ams-1",
      health: "healthy",
      defined: true,
      p90_ms: 300,
      slow_ms: slow,
    });
    expect(routeFor(map, "DE").route.shed).toEqual([{ pool: "fra-1", share: 50 }]);
    expect(JSON.stringify(map)).not.toContain("example.net");
  });
});
