import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pickWeighted, type RouteWeight, viewerPoolHash01 } from "../../../core/index.js";
import { assertSplitResult } from "../../cases/split-assertions.js";
import { evaluateSplitCase, SPLIT_CASES } from "../../cases/split-cases.js";

describe("weighted rendezvous hashing: the shared split table in Node", () => {
  it.each(SPLIT_CASES)("$name", (c) => {
    const r = evaluateSplitCase(c);
    assertSplitResult(c, r);
    console.log(
      `split ${c.name}: shares ${JSON.stringify(r.sharesBefore)}${r.sharesAfter ? ` → ${JSON.stringify(r.sharesAfter)}, moved ${((r.moved ?? 0) * 100).toFixed(2)} %` : ""}`,
    );
  });
});

describe("weighted rendezvous hashing: unit", () => {
  const ab: RouteWeight[] = [
    { pool: "fra-1", weight: 80 },
    { pool: "ams-1", weight: 20 },
  ];
  it("hashes into (0, 1), deterministically, and differently per pool", () => {
    const h = viewerPoolHash01("203.0.113.7", "fra-1");
    expect(h).toBeGreaterThan(0);
    expect(h).toBeLessThan(1);
    expect(viewerPoolHash01("203.0.113.7", "fra-1")).toBe(h);
    expect(viewerPoolHash01("203.0.113.7", "ams-1")).not.toBe(h);
    // A pinned value: a change to the hash would silently reshuffle every viewer.
    expect(viewerPoolHash01("viewer-1", "fra-1")).toMatchInlineSnapshot(`0.9003705942304805`);
  });
  it("returns undefined without a positive weight, and the only weighted pool otherwise", () => {
    expect(pickWeighted("k", [])).toBeUndefined();
    expect(pickWeighted("k", [{ pool: "fra-1", weight: 0 }])).toBeUndefined();
    expect(
      pickWeighted("k", [
        { pool: "fra-1", weight: 0 },
        { pool: "ams-1", weight: 5 },
      ]),
    ).toBe("ams-1");
  });
  it("does not depend on the order the weights are listed in", () => {
    for (let i = 0; i < 2000; i++)
      expect(pickWeighted(`v${i}`, [...ab].reverse())).toBe(pickWeighted(`v${i}`, ab));
  });
});

describe("weighted rendezvous hashing: properties", () => {
  const pools = fc.uniqueArray(fc.constantFrom("fra-1", "ams-1", "par-1", "lon-1", "waw-1"), {
    minLength: 2,
    maxLength: 5,
  });
  const split = pools.chain((ps) =>
    fc.tuple(
      ...ps.map((pool) => fc.integer({ min: 1, max: 1000 }).map((weight) => ({ pool, weight }))),
    ),
  );

  it("the same key always gets the same pool, one of the weighted ones", () => {
    fc.assert(
      fc.property(fc.string(), split, (key, weights) => {
        const p = pickWeighted(key, weights);
        expect(weights.map((w) => w.pool)).toContain(p);
        expect(pickWeighted(key, weights)).toBe(p);
      }),
      { numRuns: 2000 },
    );
  });

  it("removing a pool moves only that pool's viewers", () => {
    fc.assert(
      fc.property(fc.string(), split, fc.nat(), (key, weights, n) => {
        const gone = weights[n % weights.length]?.pool;
        const before = pickWeighted(key, weights);
        const after = pickWeighted(
          key,
          weights.filter((w) => w.pool !== gone),
        );
        if (before !== gone) expect(after).toBe(before);
      }),
      { numRuns: 3000 },
    );
  });

  it("raising one pool's weight only moves viewers onto it", () => {
    fc.assert(
      fc.property(
        fc.string(),
        split,
        fc.nat(),
        fc.integer({ min: 1, max: 500 }),
        (key, weights, n, add) => {
          const i = n % weights.length;
          const target = weights[i]?.pool;
          const raised = weights.map((w, j) => (j === i ? { ...w, weight: w.weight + add } : w));
          const before = pickWeighted(key, weights);
          const after = pickWeighted(key, raised);
          if (after !== before) expect(after).toBe(target);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
