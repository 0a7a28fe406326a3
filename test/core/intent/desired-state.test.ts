import { describe, expect, it } from "vitest";
import {
  compile,
  decodeSnapshot,
  desiredStateFromRouting,
  desiredStateToKeys,
  formatProblem,
  validateDesiredState,
} from "../../../core/index.js";
import { opts, P } from "../../helpers/snapshot.js";

const good = {
  pools: {
    "fra-1": { origin: "https://fra-1.origin.example.com", region: "eu-central" },
    "ams-1": { origin: "https://ams-1.origin.example.com" },
    "par-1": { origin: "https://par-1.origin.example.com" },
  },
  countries: {
    _default: { primary: "ams-1", fallbacks: ["par-1"] },
    DE: { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
  },
};

const problems = (doc: unknown) => {
  const r = validateDesiredState(doc);
  return r.ok ? [] : r.problems.map(formatProblem);
};

describe("validateDesiredState", () => {
  it("accepts the reference example", () => {
    expect(problems(good)).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    [
      "unknown pool in fallbacks",
      {
        ...good,
        countries: { ...good.countries, DE: { primary: "fra-1", fallbacks: ["ams-1", "fra-9"] } },
      },
      'countries.DE.fallbacks[1]: unknown pool "fra-9"',
    ],
    [
      "unknown primary",
      { ...good, countries: { ...good.countries, FR: { primary: "cdg-1" } } },
      'countries.FR.primary: unknown pool "cdg-1"',
    ],
    [
      "bad country code",
      { ...good, countries: { ...good.countries, ZZ: { primary: "fra-1" } } },
      "countries.ZZ: not an ISO 3166-1 alpha-2 code, a continent code or _default",
    ],
    [
      "missing _default",
      { pools: good.pools, countries: { DE: good.countries.DE } },
      "countries._default: required rule is missing",
    ],
    [
      "bad pool name",
      { ...good, pools: { ...good.pools, Bad_1: { origin: "https://x.example" } } },
      "pools.Bad_1: not a valid pool name (a DNS label)",
    ],
    [
      "origin with a path",
      { ...good, pools: { ...good.pools, "fra-1": { origin: "https://x.example/a" } } },
      "pools.fra-1.origin: must not have a path, query or fragment",
    ],
    [
      "duplicate fallback",
      {
        ...good,
        countries: { ...good.countries, DE: { primary: "fra-1", fallbacks: ["ams-1", "ams-1"] } },
      },
      "countries.DE.fallbacks[1]: duplicate pool",
    ],
    [
      "primary repeated",
      { ...good, countries: { ...good.countries, DE: { primary: "fra-1", fallbacks: ["fra-1"] } } },
      "countries.DE.fallbacks[0]: repeats the primary",
    ],
    [
      "nine fallbacks",
      {
        pools: Object.fromEntries(
          Array.from({ length: 10 }, (_, i) => [`p-${i}`, { origin: `https://p${i}.example` }]),
        ),
        countries: {
          _default: {
            primary: "p-0",
            fallbacks: Array.from({ length: 9 }, (_, i) => `p-${i + 1}`),
          },
        },
      },
      "countries._default.fallbacks: at most 8 fallbacks",
    ],
    ["unknown top-level key", { ...good, extra: 1 }, '(file): unknown field "extra"'],
    ["unknown field that is no identifier", { ...good, "a b\u0007": 1 }, "(file): unknown field"],
    ["not a mapping", [1, 2], "(file): must be a mapping with `pools` and `countries`"],
    ["missing pools", { countries: good.countries }, "pools: expected record, got undefined"],
  ])("%s", (_name, doc, expected) => {
    expect(problems(doc)).toContain(expected);
  });

  it("maps to canonical etcd keys that compile as the file says", () => {
    const r = validateDesiredState(good);
    if (!r.ok) throw new Error("expected valid");
    const keys = desiredStateToKeys(r.state, P);
    expect([...keys.keys()]).toEqual([
      `${P}pool/ams-1`,
      `${P}pool/fra-1`,
      `${P}pool/par-1`,
      `${P}country/DE`,
      `${P}country/_default`,
    ]);
    expect(keys.get(`${P}country/DE`)).toBe('{"primary":"fra-1","fallbacks":["ams-1","par-1"]}');
    const entries = [...keys].map(([key, value]) => ({ key, value }));
    const snapshot = { revision: 3, entries };
    const state = decodeSnapshot(snapshot, P);
    expect(desiredStateFromRouting(state)).toEqual(r.state);
    const health = ["fra-1", "ams-1", "par-1"].map((p) => ({
      key: `${P}health/${p}`,
      value: '{"status":"healthy"}',
    }));
    const map = compile({ revision: 3, entries: [...entries, ...health] }, opts()).map;
    expect(map.countries.DE?.pool).toBe("fra-1");
    expect(map.default.pool).toBe("ams-1");
  });
});

describe("validateDesiredState reports every problem at once", () => {
  it("lists shape, reference, code and _default problems together", () => {
    const doc = {
      pools: {
        "fra-1": { origin: "https://fra-1.example/path" },
        "ams-1": { origin: "https://ams-1.example" },
      },
      countries: {
        DE: { primary: "fra-9", fallbacks: ["ams-1", "ams-1"] },
        FR: { primary: "lon-1" },
        zz: { primary: "ams-1" },
      },
    };
    const found = problems(doc);
    expect(found).toEqual(
      expect.arrayContaining([
        "pools.fra-1.origin: must not have a path, query or fragment",
        "countries.DE.fallbacks[1]: duplicate pool",
        'countries.FR.primary: unknown pool "lon-1"',
        "countries.zz: not an ISO 3166-1 alpha-2 code, a continent code or _default",
        "countries._default: required rule is missing",
      ]),
    );
    expect(found).toHaveLength(5);
  });
});

describe("desired-state pools with quorum and slow_ms (docs/reference.md §9)", () => {
  const state = (pool: Record<string, unknown>) => ({
    pools: { "fra-1": { origin: "https://fra-1.example.net", ...pool } },
    countries: { _default: { primary: "fra-1" } },
  });

  it("takes them, writes them in a fixed order, and reads them back", () => {
    const r = validateDesiredState(state({ slow_ms: { high: 2000, low: 800 }, quorum: 2 }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const keys = desiredStateToKeys(r.state, P);
    expect(keys.get(`${P}pool/fra-1`)).toBe(
      '{"origin":"https://fra-1.example.net","quorum":2,"slow_ms":{"low":800,"high":2000}}',
    );
    const back = desiredStateFromRouting(
      decodeSnapshot(
        { revision: 1, entries: [...keys].map(([key, value]) => ({ key, value })) },
        P,
      ),
    );
    expect(back.pools["fra-1"]).toEqual(r.state.pools["fra-1"]);
  });

  it("names the field of a bad quorum or watermark", () => {
    const r = validateDesiredState(state({ quorum: 0, slow_ms: { low: 900, high: 800 } }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => `${p.key}: ${p.message}`)).toEqual([
      "pools.fra-1.quorum: must be at least 1",
      "pools.fra-1.slow_ms.low: must be below high",
    ]);
  });
});

describe("desired-state origins a Worker cannot fetch", () => {
  const withOrigin = (origin: string) => ({
    ...good,
    pools: { ...good.pools, "fra-1": { origin } },
  });

  it("refuses an IP-literal origin with its own code, naming the pool and the reason", () => {
    const r = validateDesiredState(withOrigin("https://203.0.113.7:8443"));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      expect.objectContaining({ key: "pools.fra-1.origin", code: "ip-literal-origin" }),
    ]);
    expect(formatProblem(r.problems[0] as never)).toMatch(
      /^pools\.fra-1\.origin: an IP-literal host.*error 1003/,
    );
  });

  it("accepts a loopback origin (the local stack's)", () => {
    expect(problems(withOrigin("http://127.0.0.1:9101"))).toEqual([]);
  });
});
