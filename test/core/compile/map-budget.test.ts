import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareProblems, listingProblems } from "../../../core/compile/map-budget.js";
import {
  COUNTRY_CODES,
  compile,
  DEFAULT_ROUTES_BUDGET_BYTES,
  MAX_PROBLEM_CHARS,
  serializeMap,
} from "../../../core/index.js";
import type { Problem } from "../../../core/intent/problem.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const MB = 1024 * 1024;
const bytes = (text: string) => Buffer.byteLength(text, "utf8");

/** Every country has its own rule: the largest set of good routes a map can hold. */
function everyCountry(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const kv = world();
  const pools = ["fra-1", "ams-1", "par-1"];
  [...COUNTRY_CODES].forEach((cc, i) => {
    const primary = pools[i % 3] as string;
    kv[`country/${cc}`] = { primary, fallbacks: pools.filter((p) => p !== primary) };
  });
  return { ...kv, ...extra };
}

/** 100 keys with names of 1 MB each, in every family, some with control characters. */
function junkKeys(): Record<string, unknown> {
  const junk: Record<string, unknown> = {};
  const families = ["", "country/", "pool/", "health/", "override/", "junk/\u001b[2J"];
  for (let i = 0; i < 100; i++) {
    const family = families[i % families.length] ?? "";
    const body = `${String(i).padStart(3, "0")}\u0007${"x".repeat(MB)}`;
    junk[`${family}${body}`] = i % 2 ? "x" : { primary: "fra-1" };
  }
  return junk;
}

describe("routes byte budget (docs/reference.md §3.6)", () => {
  it("100 junk keys of 1 MB names: routes stays under 1 MiB and routes every good country", () => {
    const clean = compile(snap(everyCountry()), opts()).map;
    const { map, problems } = compile(snap(everyCountry(junkKeys())), opts());
    const text = serializeMap(map);
    expect(bytes(text)).toBeLessThanOrEqual(DEFAULT_ROUTES_BUDGET_BYTES);
    expect(Object.keys(map.countries)).toHaveLength(COUNTRY_CODES.size);
    expect(map.countries).toEqual(clean.countries);
    expect(map.default).toEqual(clean.default);
    expect(problems).toHaveLength(100);
    // each junk key is named, cut short and escaped; nothing of a megabyte survives
    expect(map.problems).toHaveLength(100);
    for (const line of map.problems) {
      expect(line.length).toBeLessThanOrEqual(MAX_PROBLEM_CHARS);
      expect(/\p{Cc}/u.test(line)).toBe(false);
      expect(line).toContain("\\u0007");
    }
    expect(map.problems.filter((l) => l.startsWith("junk/\\u001b[2J"))).toHaveLength(16);
  });

  it("junk that does not fit is counted by code; good countries and broken rules stay listed", () => {
    const junk: Record<string, unknown> = { "country/DE": "{broken" };
    for (let i = 0; i < 3000; i++) junk[`junk/${i}`] = "x";
    for (let i = 0; i < 500; i++) junk[`pool/Bad_${i}`] = "x";
    const clean = compile(snap(everyCountry()), opts()).map;
    const budget = bytes(serializeMap(clean)) + 20_000;
    const { map } = compile(
      snap(everyCountry(junk)),
      opts({ routesBudgetBytes: budget, carried: clean }),
    );
    expect(bytes(serializeMap(map))).toBeLessThanOrEqual(budget);
    expect(map.countries).toEqual(clean.countries);
    expect(map.problems[0]).toBe("country/DE: invalid JSON");
    const counts = map.problems.filter((l) => l.startsWith("… and "));
    const shown = map.problems.length - counts.length - 1;
    const counted = counts.map((l) => Number(/^… and (\d+) more/.exec(l)?.[1]));
    expect(shown + counted.reduce((a, b) => a + b, 0)).toBe(3500);
    expect(counts.at(-1)).toMatch(/^… and \d+ more unknown-key problems$/);
  });

  it("routes alone over the budget: every country is still routed, problems are only counts", () => {
    const junk: Record<string, unknown> = { "country/ZZ": "{}", "junk/a": "x", "junk/b": "x" };
    const { map } = compile(snap(everyCountry(junk)), opts({ routesBudgetBytes: 1000 }));
    expect(Object.keys(map.countries)).toHaveLength(COUNTRY_CODES.size);
    expect(map.problems).toEqual([
      "… and 1 more invalid-key problems",
      "… and 2 more unknown-key problems",
    ]);
  });

  it("a map within budget lists every problem in full", () => {
    const { map, problems } = compile(snap(world({ "junk/a": "x", "country/FR": "{" })), opts());
    expect(map.problems).toEqual(["country/FR: invalid JSON", "junk/a: unknown key, ignored"]);
    expect(problems).toHaveLength(2);
  });
});

describe("origins are bounded too", () => {
  it("a pool whose origin host is over 253 characters is invalid, so no route can hold it", () => {
    const host = `${"a".repeat(60)}.`.repeat(5);
    const previous = compile(snap(world()), opts()).map;
    const { map } = compile(
      snap(world({ "pool/fra-1": { origin: `https://${host}example.net` } })),
      opts({ carried: previous }),
    );
    expect(map.problems).toContain("pool/fra-1: origin: host name over 253 characters");
    // DE's rule now names an undefined pool: it routes by its last valid rule, without fra-1
    expect(map.countries.DE?.chain.map((c) => c.pool)).toEqual(["ams-1", "par-1"]);
  });
});

const problemOf = (key: string, code: Problem["code"], message: string): Problem => ({
  key,
  code,
  message,
});

describe("listingProblems", () => {
  it("orders for listing, drops repeats of key, code and message, keeps the first of each", () => {
    const list = [
      problemOf("junk/a", "unknown-key", "not a routing key"),
      problemOf("country/DE", "dangling-reference", "pool x is not defined"),
      problemOf("country/DE", "fence-crossing", "pool x is not defined"),
      problemOf("country/DE", "dangling-reference", "pool x is not defined"),
      problemOf("country/DE", "dangling-reference", "pool y is not defined"),
      problemOf("country/AT", "invalid-json", "invalid JSON"),
      problemOf("junk/a", "unknown-key", "not a routing key"),
    ];
    const listed = listingProblems(list);
    expect(listed).toEqual([list[5], list[1], list[2], list[4], list[0]]);
    expect(listed[1]).toBe(list[1]);
  });

  it("equals dropping repeats in order, then a stable sort (any list)", () => {
    const codes = ["unknown-key", "invalid-key", "invalid-json", "dangling-reference"] as const;
    const item = fc
      .record({
        key: fc.constantFrom("a", "b", "country/DE", "junk/x"),
        code: fc.constantFrom(...codes),
        message: fc.constantFrom("m1", "m2"),
      })
      .map((r): Problem => ({ ...r }));
    fc.assert(
      fc.property(fc.array(item, { maxLength: 40 }), (list) => {
        const seen = new Set<string>();
        const reference = list
          .filter((p) => {
            const id = JSON.stringify([p.key, p.code, p.message]);
            if (seen.has(id)) return false;
            seen.add(id);
            return true;
          })
          .sort(compareProblems);
        const listed = listingProblems(list);
        expect(listed).toHaveLength(reference.length);
        for (const [i, p] of listed.entries()) expect(p).toBe(reference[i]);
      }),
      { numRuns: 500 },
    );
  });
});
