import { describe, expect, it } from "vitest";
import {
  attrsProblem,
  CountryRuleSchema,
  compile,
  mergeAttrs,
  parseMap,
  serializeMap,
} from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const run = (kv: Record<string, unknown>, extra: Parameters<typeof opts>[0] = {}) =>
  compile(snap(kv), opts(extra)).map;

describe("market attributes: validation", () => {
  it("accepts up to 8 names of [a-z][a-z0-9-]{0,31} with printable ASCII values up to 128", () => {
    const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`a${i}`, "x"]));
    expect(attrsProblem(eight)).toBeNull();
    expect(
      attrsProblem({ "cdn-host": "cdn.example.com", tier: "g".repeat(128), e: "" }),
    ).toBeNull();
  });

  it.each([
    [{ ...Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`a${i}`, "x"])) }, /at most 8/],
    [{ Tier: "x" }, /names must match/],
    [{ "9lives": "x" }, /names must match/],
    [{ ["a".repeat(33)]: "x" }, /names must match/],
    [{ tier: "g".repeat(129) }, /at most 128 printable ASCII/],
    [{ tier: "a\r\nX-Evil: 1" }, /printable ASCII/],
    [{ tier: "\u001b[2J" }, /printable ASCII/],
    [{ tier: "göld" }, /printable ASCII/],
    [{ tier: 5 }, /must be strings/],
  ])("refuses %j without echoing it", (attrs, message) => {
    const problem = attrsProblem(attrs as Record<string, unknown>);
    expect(problem).toMatch(message);
    for (const [name, value] of Object.entries(attrs)) {
      expect(problem).not.toContain(name);
      if (typeof value === "string" && value.length > 2) expect(problem).not.toContain(value);
    }
  });

  it("a rule with bad attrs is invalid, naming the field", () => {
    const r = CountryRuleSchema.safeParse({ primary: "fra-1", attrs: { "Bad Name": "x" } });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(["attrs"]);
  });

  it("merges later layers over earlier ones, names sorted; nothing gives undefined", () => {
    expect(mergeAttrs({ b: "1", a: "1" }, undefined, { b: "2", c: "3" })).toEqual({
      a: "1",
      b: "2",
      c: "3",
    });
    expect(Object.keys(mergeAttrs({ z: "1", a: "1" }) ?? {})).toEqual(["a", "z"]);
    expect(mergeAttrs(undefined, {})).toBeUndefined();
  });
});

describe("market attributes: compile", () => {
  const withAttrs = (extra: Record<string, unknown> = {}) =>
    world({
      "continent/EU": { primary: "ams-1", attrs: { tier: "silver", tokenizer: "eu", cdn: "eu-1" } },
      "country/DE": {
        primary: "fra-1",
        fallbacks: ["ams-1", "par-1"],
        attrs: { tokenizer: "de", trending: "dax-1" },
      },
      ...extra,
    });

  it("a country takes its continent rule's attrs, overlaid by its own rule's", () => {
    const map = run(withAttrs());
    expect(map.countries.DE?.attrs).toEqual({
      cdn: "eu-1",
      tier: "silver",
      tokenizer: "de",
      trending: "dax-1",
    });
    // FR has no rule of its own: the continent's.
    expect(map.countries.FR?.attrs).toEqual({ cdn: "eu-1", tier: "silver", tokenizer: "eu" });
    // Outside the continent, nothing.
    expect(map.default.attrs).toBeUndefined();
  });

  it("an active override overlays the country's; a continent override sits under country rules", () => {
    const map = run(
      withAttrs({
        "override/DE": { primary: "fra-1", attrs: { trending: "music-1" } },
        "override/EU": { primary: "ams-1", attrs: { tier: "gold", trending: "eu-boost" } },
      }),
    );
    expect(map.countries.DE?.attrs).toEqual({
      cdn: "eu-1",
      tier: "gold",
      tokenizer: "de",
      trending: "music-1",
    });
    expect(map.countries.FR?.attrs).toMatchObject({ tier: "gold", trending: "eu-boost" });
  });

  it("an expired override's attrs are gone with it", () => {
    const map = run(
      withAttrs({
        "override/DE": {
          primary: "fra-1",
          attrs: { trending: "music-1" },
          expires_at: "2026-11-29T14:00:00.000Z",
        },
      }),
    );
    expect(map.countries.DE?.attrs?.trending).toBe("dax-1");
  });

  it("_default carries its own rule's attrs; a country on _default gets them", () => {
    const map = run(
      world({
        "country/_default": { primary: "ams-1", fallbacks: ["par-1"], attrs: { tier: "std" } },
      }),
    );
    expect(map.default.attrs).toEqual({ tier: "std" });
  });

  it("attrs stay when every pool is down (the floor still serves that market)", () => {
    const kv = withAttrs();
    for (const p of ["fra-1", "ams-1", "par-1"]) delete kv[`health/${p}`];
    const map = run(kv);
    expect(map.countries.DE?.degraded).toBe("all-pools-unhealthy");
    expect(map.countries.DE?.attrs?.trending).toBe("dax-1");
  });

  it("a rule that turns invalid keeps routing and its attrs by its last valid rule, across KV", () => {
    const first = run(withAttrs());
    // Written to KV and read back, as after a restart.
    const previous = parseMap(serializeMap(first));
    expect(previous?.kept?.DE?.attrs).toEqual({ tokenizer: "de", trending: "dax-1" });
    const map = run(withAttrs({ "country/DE": { primary: "fra-1", attrs: { "Bad Name": "x" } } }), {
      carried: previous,
    });
    expect(map.countries.DE?.pool).toBe("fra-1");
    expect(map.countries.DE?.attrs).toMatchObject({ tokenizer: "de", trending: "dax-1" });
    expect(map.problems.some((p) => p.startsWith("country/DE"))).toBe(true);
  });

  it("serializes attrs with names sorted, and a map without attrs has no attrs field", () => {
    const text = serializeMap(run(withAttrs()));
    expect(text).toContain(
      '"attrs":{"cdn":"eu-1","tier":"silver","tokenizer":"de","trending":"dax-1"}',
    );
    expect(serializeMap(run(world()))).not.toContain("attrs");
  });
});
