import { describe, expect, it } from "vitest";
import type { PrefixRead } from "../../adapters/prefix-read.js";
import { CountryRuleSchema, canonicalRule } from "../../core/index.js";
import {
  diffIntent,
  formatDiff,
  MAX_PLAN_VALUE_CHARS,
  planValueText,
} from "../../edgectl/apply/plan-diff.js";

const P = "/p/";

function read(entries: Record<string, string>, revision = 10): PrefixRead {
  return {
    revision,
    entries: Object.entries(entries).map(([rel, v], i) => ({
      key: `${P}${rel}`,
      rel,
      value: Buffer.from(v),
      createRevision: i + 1,
      modRevision: i + 1,
      lease: "0",
    })),
  };
}

describe("diffIntent", () => {
  const desired = {
    pools: { "a-1": { origin: "https://a.example.com" } },
    countries: { _default: { primary: "a-1", fallbacks: [] } },
  };

  it("ignores key order in stored JSON and never touches overrides, health, epoch or the lock", () => {
    const r = read({
      "pool/a-1": '{"origin":"https://a.example.com"}',
      "country/_default": '{"fallbacks":[],"primary":"a-1"}',
      "override/DE": "{}",
      "health/a-1": "{}",
      epoch: "3",
      "lock/apply": "x",
    });
    expect(diffIntent(r, desired, P)).toEqual([]);
  });

  it("removes intent keys the file does not name, including invalid ones", () => {
    const r = read({
      "pool/a-1": '{"origin":"https://a.example.com"}',
      "country/_default": "{broken",
      "country/ZZ": "{}",
      "pool/b-1": '{"origin":"https://b.example.com"}',
    });
    expect(diffIntent(r, desired, P).map((c) => `${c.kind} ${c.rel}`)).toEqual([
      "remove country/ZZ",
      "change country/_default",
      "remove pool/b-1",
    ]);
  });
});

describe("formatDiff: a bounded, escaped excerpt of each value", () => {
  it("shows a value whole when it fits, escaped", () => {
    expect(planValueText('{"primary":"a-1"}\u001b[31m')).toBe('{"primary":"a-1"}\\u001b[31m');
  });

  it("cuts a huge value to MAX_PLAN_VALUE_CHARS and gives its size", () => {
    const huge = `{"primary":${"[".repeat(30_000)}${"]".repeat(30_000)}}`;
    const [, line] = formatDiff([
      { kind: "remove", key: `${P}country/FR`, rel: "country/FR", before: huge },
    ]);
    expect(line).toMatch(/^ {2}- country\/FR {2}\(was \{"primary":\[+… \(60012 bytes\)\)$/);
    expect(line?.length).toBeLessThan(MAX_PLAN_VALUE_CHARS + 50);
  });

  it("never cuts the longest valid rule", () => {
    const pools = Array.from({ length: 9 }, (_, i) => `${String(i).repeat(63)}`);
    const rule = {
      primary: pools[0] ?? "",
      fallbacks: pools.slice(1),
      weights: Object.fromEntries(pools.map((p) => [p, 1000])),
      attrs: Object.fromEntries(
        Array.from({ length: 8 }, (_, i) => [`a${String(i).repeat(31)}`, "~".repeat(128)]),
      ),
    };
    const text = canonicalRule(CountryRuleSchema.parse(rule));
    expect(text.length).toBeGreaterThan(2000);
    expect(planValueText(text)).toBe(text);
  });
});
