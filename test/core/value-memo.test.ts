import { describe, expect, it } from "vitest";
import { readSnapshot } from "../../core/snapshot.js";
import { ValueMemo } from "../../core/value-memo.js";

const P = "/t/routing/v1/";
const entry = (rel: string, value: string, modRevision: number) => ({
  key: `${P}${rel}`,
  value: new TextEncoder().encode(value),
  modRevision,
});

describe("ValueMemo", () => {
  it("decodes a key again only when its mod_revision changes", () => {
    const memo = new ValueMemo();
    let runs = 0;
    const decode = (v: string) => () => {
      runs += 1;
      return v;
    };
    expect(memo.get("a", 5, decode("x"))).toBe("x");
    memo.endPass();
    expect(memo.get("a", 5, decode("y"))).toBe("x");
    memo.endPass();
    expect(runs).toBe(1);
    expect(memo.get("a", 6, decode("z"))).toBe("z");
    expect(runs).toBe(2);
  });

  it("forgets keys a pass did not read, everything on clear, and never memoizes without a revision", () => {
    const memo = new ValueMemo();
    memo.get("a", 1, () => "a1");
    memo.get("b", 1, () => "b1");
    memo.endPass();
    memo.get("a", 1, () => "again");
    memo.endPass();
    expect(memo.get("b", 1, () => "b-decoded")).toBe("b-decoded");
    memo.endPass();
    memo.clear();
    expect(memo.get("a", 1, () => "after-clear")).toBe("after-clear");
    expect(memo.get("c", undefined, () => "c1")).toBe("c1");
    memo.endPass();
    expect(memo.get("c", undefined, () => "c2")).toBe("c2");
  });

  it("gives readSnapshot the same state as decoding afresh, invalid values and problems included", () => {
    const memo = new ValueMemo();
    const snap = (deRule: string, rev: number) => ({
      revision: rev,
      entries: [
        entry("country/_default", '{"primary":"a","fallbacks":[]}', 1),
        entry("country/DE", deRule, rev),
        entry("country/FR", "{not json", 1),
        entry("pool/a", '{"origin":"https://a.example.com"}', 1),
        entry("health/a", '{"status":"healthy"}', 1),
      ],
    });
    for (const [rule, rev] of [
      ['{"primary":"a","fallbacks":[]}', 2],
      ['{"primary":"a","fallbacks":[]}', 2],
      ['{"primary":7}', 3],
      ['{"primary":"b","fallbacks":["a"]}', 4],
    ] as const) {
      const s = snap(rule, rev);
      expect(readSnapshot(s, P, memo)).toEqual(readSnapshot(s, P));
    }
  });
});
