import { describe, expect, it } from "vitest";
import {
  compile,
  MAX_MAP_PROBLEMS,
  parseMap,
  sameMap,
  sameRouting,
  serializeMap,
} from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const run = (kv: Record<string, unknown>, extra: Parameters<typeof opts>[0] = {}) =>
  compile(snap(kv), opts(extra)).map;

describe("compile", () => {
  it("routes each country by its rule and the rest by _default", () => {
    const map = run(world());
    expect(map.rev).toBe(10);
    expect(map.epoch).toBe(7);
    expect(map.compiled_at).toBe("2026-11-29T15:00:00.000Z");
    expect(map.default).toEqual({
      pool: "ams-1",
      origin: "https://ams-1.example.net",
      chain: [
        { pool: "ams-1", origin: "https://ams-1.example.net" },
        { pool: "par-1", origin: "https://par-1.example.net" },
      ],
      source: "country/_default",
      degraded: null,
    });
    expect(map.countries.DE?.pool).toBe("fra-1");
    expect(map.countries.DE?.chain.map((c) => c.pool)).toEqual(["fra-1", "ams-1", "par-1"]);
    expect(map.countries.DE?.source).toBe("country/DE");
    expect(Object.keys(map.countries)).toEqual(["DE"]);
    expect(map.problems).toEqual([]);
  });

  it("an override wins over the country rule", () => {
    const map = run(world({ "override/DE": { primary: "par-1", fallbacks: [], reason: "drill" } }));
    expect(map.countries.DE).toMatchObject({ pool: "par-1", source: "override/DE" });
  });

  it("an override can target a country with no rule, and _default", () => {
    const map = run(
      world({ "override/FR": { primary: "fra-1" }, "override/_default": { primary: "par-1" } }),
    );
    expect(map.countries.FR).toMatchObject({ pool: "fra-1", source: "override/FR" });
    expect(map.default).toMatchObject({ pool: "par-1", source: "override/_default" });
  });

  it("skips pools that are not healthy, keeping chain order", () => {
    const map = run(world({ "health/fra-1": { status: "draining" } }));
    expect(map.countries.DE?.chain.map((c) => c.pool)).toEqual(["ams-1", "par-1"]);
    expect(map.countries.DE?.pool).toBe("ams-1");
    expect(map.countries.DE?.degraded).toBeNull();
  });

  it("treats a missing health key (expired lease) as unhealthy", () => {
    const kv = world();
    delete kv["health/fra-1"];
    expect(run(kv).countries.DE?.pool).toBe("ams-1");
  });

  it("treats an invalid health value as unhealthy and reports it", () => {
    const map = run(world({ "health/fra-1": "{bad" }));
    expect(map.countries.DE?.pool).toBe("ams-1");
    expect(map.problems.some((p) => p.startsWith("health/fra-1: invalid JSON"))).toBe(true);
  });

  it("falls to the floor when every pool is unhealthy: all-pools-unhealthy", () => {
    const map = run(
      world({
        "health/fra-1": { status: "unhealthy" },
        "health/ams-1": { status: "unhealthy" },
        "health/par-1": { status: "unhealthy" },
      }),
    );
    for (const route of [map.default, map.countries.DE]) {
      expect(route).toEqual({
        pool: "par-1",
        origin: "https://par-1.example.net",
        chain: [{ pool: "par-1", origin: "https://par-1.example.net" }],
        source: "floor",
        degraded: "all-pools-unhealthy",
      });
    }
  });

  it("uses ORIGIN_TEMPLATE for a floor pool with no definition", () => {
    const map = run(
      { epoch: "1" },
      { floorPool: "last-1", originTemplate: "https://{pool}.o.test" },
    );
    expect(map.default).toMatchObject({
      pool: "last-1",
      origin: "https://last-1.o.test",
      source: "floor",
      degraded: "no-default-rule",
    });
  });

  it("missing _default: the default is the floor with no-default-rule", () => {
    const kv = world();
    delete kv["country/_default"];
    const map = run(kv);
    expect(map.default).toMatchObject({
      pool: "par-1",
      source: "floor",
      degraded: "no-default-rule",
    });
    expect(map.countries.DE?.pool).toBe("fra-1");
    expect(map.problems).toContain("country/_default: required rule is missing");
  });

  it("a dangling reference makes the rule unusable and is reported", () => {
    const map = run(world({ "country/FR": { primary: "lon-1", fallbacks: ["par-1"] } }));
    expect(map.countries.FR).toBeUndefined();
    expect(map.problems).toContain('country/FR: names undefined pool "lon-1"');
  });

  it("an invalid country rule routes by its last valid rule (with current health)", () => {
    const first = run(world());
    const map = run(world({ "country/DE": "{broken", "health/fra-1": { status: "draining" } }), {
      carried: first,
    });
    expect(map.countries.DE).toMatchObject({ pool: "ams-1", source: "country/DE", degraded: null });
    expect(map.countries.DE?.chain.map((c) => c.pool)).toEqual(["ams-1", "par-1"]);
    expect(map.problems.some((p) => p.startsWith("country/DE: invalid JSON"))).toBe(true);
  });

  it("an invalid country rule with no history is left to _default", () => {
    const map = run(world({ "country/FR": { primary: 1 } }));
    expect(map.countries.FR).toBeUndefined();
    expect(map.default.pool).toBe("ams-1");
  });

  it("an invalid _default routes by its last valid rule", () => {
    const first = run(world());
    const map = run(world({ "country/_default": "nope" }), { carried: first });
    expect(map.default).toMatchObject({ pool: "ams-1", source: "country/_default" });
  });

  it("an invalid override is ignored in favour of the country rule", () => {
    const map = run(world({ "override/DE": { primary: "nope-9" } }));
    expect(map.countries.DE).toMatchObject({ pool: "fra-1", source: "country/DE" });
    expect(map.problems).toContain('override/DE: names undefined pool "nope-9"');
  });

  it("bad values never take good keys down", () => {
    const good = run(world());
    const map = run(
      world({
        "country/FR": "]]",
        "country/ZZ": { primary: "fra-1" },
        "pool/bad-1": { origin: "nope" },
        "junk/key": "x",
        epoch: "x",
      }),
      { carried: good },
    );
    expect(map.countries.DE).toEqual(good.countries.DE);
    expect(map.default).toEqual(good.default);
    // Problems of keys the compiler uses first, then bad key names, then unknown keys.
    expect(map.problems).toEqual([
      "country/FR: invalid JSON",
      "epoch: must be a decimal integer",
      "pool/bad-1: origin: not an absolute URL",
      "country/ZZ: not an ISO 3166-1 alpha-2 code",
      "junk/key: unknown key, ignored",
    ]);
  });

  it("emits stable JSON: fixed key order, sorted countries, no whitespace", () => {
    const map = run(
      world({ "country/AT": { primary: "fra-1" }, "country/BE": { primary: "ams-1" } }),
    );
    const text = serializeMap(map);
    expect(text).not.toMatch(/\s/);
    expect(
      text.startsWith(
        '{"v":1,"rev":10,"epoch":7,"compiled_at":"2026-11-29T15:00:00.000Z","default":{"pool":',
      ),
    ).toBe(true);
    const countries = Object.keys(JSON.parse(text).countries);
    expect(countries).toEqual(["AT", "BE", "DE"]);
    expect(text.indexOf('"countries"')).toBeLessThan(text.indexOf('"problems"'));
    expect(parseMap(text)).toEqual(JSON.parse(text));
    // Reordered input compiles to the same bytes.
    const reversed = snap(
      world({ "country/AT": { primary: "fra-1" }, "country/BE": { primary: "ams-1" } }),
    );
    const again = compile({ ...reversed, entries: [...reversed.entries].reverse() }, opts()).map;
    expect(serializeMap(again)).toBe(text);
  });

  it("sameMap ignores only compiled_at; sameRouting also ignores rev, epoch and below_since", () => {
    const a = run(world());
    const b = compile(snap(world(), 10), opts({ now: new Date(0) })).map;
    const c = compile(snap(world({ epoch: "8" }), 11), opts()).map;
    expect(sameMap(a, b)).toBe(true);
    expect(sameMap(a, c)).toBe(false);
    expect(sameRouting(a, c)).toBe(true);
    expect(sameRouting(a, run(world({ "health/fra-1": { status: "unhealthy" } })))).toBe(false);
    const shed = { share: 40, at: "2026-11-29T15:00:00.000Z" };
    const falling = {
      ...a,
      sheds: { "fra-1": { ...shed, below_since: "2026-11-29T15:00:30.000Z" } },
    };
    expect(sameRouting({ ...a, sheds: { "fra-1": shed } }, falling)).toBe(true);
    expect(sameMap({ ...a, sheds: { "fra-1": shed } }, falling)).toBe(false);
    expect(sameRouting({ ...a, sheds: { "fra-1": { ...shed, share: 30 } } }, falling)).toBe(false);
    expect(sameRouting(a, { ...a, problems: ["country/ZZ: not a country"] })).toBe(false);
  });
});

describe("compile problems cap", () => {
  it("lists at most MAX_MAP_PROBLEMS problems and counts the rest by code", () => {
    const junk: Record<string, unknown> = { "country/FR": "{", "country/ZZ": "{}" };
    for (let i = 0; i < MAX_MAP_PROBLEMS + 50; i++)
      junk[`junk/${String(i).padStart(5, "0")}`] = "x";
    const result = compile(snap(world(junk)), opts());
    expect(result.problems).toHaveLength(MAX_MAP_PROBLEMS + 52);
    const listed = result.map.problems;
    expect(listed.length).toBeLessThanOrEqual(MAX_MAP_PROBLEMS);
    // the broken rule and the bad key name come before the flood of unknown keys
    expect(listed.slice(0, 3)).toEqual([
      "country/FR: invalid JSON",
      "country/ZZ: not an ISO 3166-1 alpha-2 code",
      "junk/00000: unknown key, ignored",
    ]);
    const shown = listed.filter((l) => l.startsWith("junk/")).length;
    expect(listed.at(-1)).toBe(`… and ${MAX_MAP_PROBLEMS + 50 - shown} more unknown-key problems`);
    expect(listed.filter((l) => l.startsWith("…"))).toHaveLength(1);
  });
});
