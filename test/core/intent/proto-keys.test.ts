import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { compile, formatProblem, validateDesiredState } from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

/** A desired state parsed from JSON text, with `countries` and `pools` entries spliced in. */
const docWith = (countries: string, pools = "") =>
  JSON.parse(`{
    "pools": {${pools}
      "fra-1": { "origin": "https://fra-1.origin.example.com" },
      "ams-1": { "origin": "https://ams-1.origin.example.com" }
    },
    "countries": {
      "_default": { "primary": "ams-1", "fallbacks": [] },
      ${countries}
    }
  }`) as unknown;

const problems = (doc: unknown) => {
  const r = validateDesiredState(doc);
  return r.ok ? [] : r.problems.map(formatProblem);
};

describe("a __proto__ key is refused, as constructor is, never dropped", () => {
  it("desired-state countries: an invalid key, from JSON and from YAML", () => {
    expect(problems(docWith('"__proto__": { "primary": "fra-1", "fallbacks": [] }'))).toEqual([
      "countries.__proto__: not an ISO 3166-1 alpha-2 code, a continent code or _default",
    ]);
    const yaml = parse(`
pools: { fra-1: { origin: "https://fra-1.origin.example.com" } }
countries:
  _default: { primary: fra-1 }
  __proto__: { primary: fra-1 }
  constructor: { primary: fra-1 }
`);
    expect(problems(yaml)).toEqual([
      "countries.__proto__: not an ISO 3166-1 alpha-2 code, a continent code or _default",
      "countries.constructor: not an ISO 3166-1 alpha-2 code, a continent code or _default",
    ]);
  });

  it("desired-state pools: an invalid pool name", () => {
    expect(
      problems(
        docWith(
          '"DE": { "primary": "fra-1" }',
          '"__proto__": { "origin": "https://x.example.com" },',
        ),
      ),
    ).toEqual(["pools.__proto__: not a valid pool name (a DNS label)"]);
  });

  it("weights: a pool the rule does not name", () => {
    for (const key of ["__proto__", "constructor"]) {
      expect(
        problems(docWith(`"DE": { "primary": "fra-1", "weights": { "fra-1": 1, "${key}": 1 } }`)),
        key,
      ).toEqual(["countries.DE.weights: names a pool that is not the primary or a fallback"]);
    }
  });

  it("attrs: a name outside [a-z][a-z0-9-]{0,31}", () => {
    expect(
      problems(
        docWith('"DE": { "primary": "fra-1", "attrs": { "market": "de", "__proto__": "x" } }'),
      ),
    ).toEqual(["countries.DE.attrs: attribute names must match [a-z][a-z0-9-]{0,31}"]);
  });

  it("the pusher's decoding of a rule's (and an override's) weights and attrs refuses it too", () => {
    const snapshot = snap(
      world({
        "country/DE":
          '{"primary":"fra-1","fallbacks":["ams-1"],"weights":{"fra-1":1,"ams-1":1,"__proto__":5}}',
        "country/FR": '{"primary":"fra-1","attrs":{"__proto__":"x"}}',
        "override/GB":
          '{"primary":"fra-1","fallbacks":["ams-1"],"weights":{"fra-1":1,"__proto__":1}}',
      }),
    );
    const r = compile(snapshot, opts());
    expect(r.problems.map(formatProblem)).toEqual([
      "country/DE: weights: names a pool that is not the primary or a fallback",
      "country/FR: attrs: attribute names must match [a-z][a-z0-9-]{0,31}",
      "override/GB: weights: names a pool that is not the primary or a fallback",
    ]);
    // DE falls back to _default rather than to a split the rule never meant
    expect(r.map.countries.DE).toBeUndefined();
  });
});
