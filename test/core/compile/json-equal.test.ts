import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonEqual } from "../../../core/index.js";

const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe("jsonEqual", () => {
  it("answers as Node's isDeepStrictEqual for JSON values, equal or not", () => {
    fc.assert(
      // As JSON writes them (-0 is written 0, and jsonEqual says so; Node tells them apart).
      fc.property(fc.jsonValue().map(asJson), fc.jsonValue().map(asJson), (a, b) => {
        expect(jsonEqual(a, b)).toBe(isDeepStrictEqual(a, b));
        // A copy made by JSON is equal; so is one with its keys in another order.
        const copy = JSON.parse(JSON.stringify(a)) as unknown;
        expect(jsonEqual(a, copy)).toBe(isDeepStrictEqual(a, copy));
      }),
      { numRuns: 500 },
    );
  });

  it("ignores key order and tells an undefined member from an absent one", () => {
    expect(jsonEqual({ a: 1, b: [1, { c: "x" }] }, { b: [1, { c: "x" }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, fence: undefined }, { a: 1 })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, fence: undefined })).toBe(false);
    expect(jsonEqual([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(jsonEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual({ a: null }, { a: {} })).toBe(false);
    expect(jsonEqual({ a: -0 }, { a: 0 })).toBe(true);
  });
});
