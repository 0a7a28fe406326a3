import { describe, expect, it } from "vitest";
import {
  compile,
  decodeSnapshot,
  ObservedSchema,
  parseKey,
  routingKeys,
} from "../../../core/index.js";
import { decodeJson } from "../../../core/intent/value-decode.js";
import { opts, P, snap, world } from "../../helpers/snapshot.js";

describe("observed/{CC}/{pool}: the key family", () => {
  it.each([
    ["observed/BR/us-east", { kind: "observed", cc: "BR", pool: "us-east" }],
    ["observed/XX/fra-1", { kind: "observed", cc: "XX", pool: "fra-1" }],
    ["observed/T1/fra-1", { kind: "observed", cc: "T1", pool: "fra-1" }],
  ])("%s", (key, expected) => {
    expect(parseKey(key)).toEqual(expected);
  });

  it.each([
    ["observed/ZZ/fra-1", "ISO 3166-1"],
    ["observed/_default/fra-1", "ISO 3166-1"],
    ["observed/EU/fra-1", "ISO 3166-1"],
    ["observed/BR", "pool name"],
    ["observed/BR/", "pool name"],
    ["observed/BR/Fra_1", "pool name"],
    ["observed/BR/fra-1/x", "pool name"],
  ])("%s is an invalid key naming the bad part", (key, reason) => {
    const k = parseKey(key);
    expect(k.kind).toBe("invalid");
    expect(k.kind === "invalid" && k.reason).toContain(reason);
  });

  it("builds the key and its family's prefix", () => {
    const k = routingKeys("/p/");
    expect(k.observed("BR", "us-east")).toBe("/p/observed/BR/us-east");
    expect(k.observedPrefix).toBe("/p/observed/");
  });
});

describe("ObservedSchema", () => {
  it("decodes the observer's value", () => {
    const d = decodeJson(
      JSON.stringify({ p90_ms: 3100, samples: 412, error_ratio: 0.002 }),
      ObservedSchema,
    );
    expect(d).toEqual({ ok: true, value: { p90_ms: 3100, samples: 412, error_ratio: 0.002 } });
  });

  it.each([
    [{ p90_ms: -1, samples: 1, error_ratio: 0 }, "p90_ms"],
    [{ p90_ms: 10, samples: 1.5, error_ratio: 0 }, "samples"],
    [{ p90_ms: 10, samples: 1, error_ratio: 1.5 }, "error_ratio"],
    [{ p90_ms: 10, samples: 1 }, "error_ratio"],
    [{ p90_ms: 10, samples: 1, error_ratio: 0, hit_ratio: 1.5 }, "hit_ratio"],
    [{ p90_ms: 10, samples: 1, error_ratio: 0, ip: "203.0.113.9" }, "ip"],
  ])("refuses %j, naming the field and never the value", (value, field) => {
    const d = decodeJson(JSON.stringify(value), ObservedSchema);
    expect(d.ok).toBe(false);
    if (d.ok) return;
    expect(d.code).toBe("invalid-value");
    expect(d.message).toContain(field);
    expect(d.message).not.toContain("203.0.113.9");
  });
});

describe("observed/ keys in the routing state", () => {
  it("a valid observation is no longer an unknown key, and the compile routes exactly as without it", () => {
    const plain = decodeSnapshot(snap(world()), P);
    const state = decodeSnapshot(
      snap(world({ "observed/DE/fra-1": { p90_ms: 4000, samples: 900, error_ratio: 0.3 } })),
      P,
    );
    expect(state.problems).toEqual([]);
    const a = compile(snap(world()), opts());
    const b = compile(
      snap(world({ "observed/DE/fra-1": { p90_ms: 4000, samples: 900, error_ratio: 0.3 } })),
      opts(),
    );
    expect({ ...b.map.countries, _default: b.map.default }).toEqual({
      ...a.map.countries,
      _default: a.map.default,
    });
    expect(plain.problems).toEqual([]);
  });

  it("the compile's state carries the hit ratio of a value that has one, and none of one without", () => {
    const state = decodeSnapshot(
      snap(
        world({
          "observed/DE/fra-1": { p90_ms: 40, samples: 900, error_ratio: 0, hit_ratio: 0.8 },
          "observed/BR/fra-1": { p90_ms: 40, samples: 900, error_ratio: 0 },
        }),
      ),
      P,
    );
    expect(state.problems).toEqual([]);
    expect(state.observed.get("DE")?.get("fra-1")?.hit_ratio).toBe(0.8);
    expect(state.observed.get("BR")?.get("fra-1")).toEqual({
      p90_ms: 40,
      samples: 900,
      error_ratio: 0,
    });
  });

  it("a junk observation is reported by key and code, and routes nothing", () => {
    const state = decodeSnapshot(snap(world({ "observed/DE/fra-1": "{not json" })), P);
    expect(state.problems).toEqual([
      expect.objectContaining({ key: "observed/DE/fra-1", code: "invalid-json" }),
    ]);
    const a = compile(snap(world()), opts());
    const b = compile(snap(world({ "observed/DE/fra-1": "{not json" })), opts());
    expect({ ...b.map.countries, _default: b.map.default }).toEqual({
      ...a.map.countries,
      _default: a.map.default,
    });
  });
});
