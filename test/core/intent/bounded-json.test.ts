import { describe, expect, it } from "vitest";
import {
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  parseBoundedJson,
} from "../../../core/intent/bounded-json.js";
import { MAX_VALUE_BYTES } from "../../../core/intent/schema.js";

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

describe("parseBoundedJson", () => {
  it("parses JSON within the bounds", () => {
    expect(parseBoundedJson('{"primary":"fra-1","fallbacks":["ams-1"]}')).toEqual({
      ok: true,
      value: { primary: "fra-1", fallbacks: ["ams-1"] },
    });
    expect(parseBoundedJson(nested(MAX_JSON_DEPTH))).toMatchObject({ ok: true });
  });

  it("leaves text nested past MAX_JSON_DEPTH as too-deep, however deep", () => {
    expect(parseBoundedJson(nested(MAX_JSON_DEPTH + 1))).toEqual({ ok: false, reason: "too-deep" });
    expect(parseBoundedJson(`{"a":${nested(30_000)}}`)).toEqual({ ok: false, reason: "too-deep" });
    expect(parseBoundedJson(nested(3), { maxDepth: 2 })).toEqual({ ok: false, reason: "too-deep" });
  });

  it("counts no bracket inside a string, escaped quotes included", () => {
    const text = JSON.stringify({ a: `\\"${"[".repeat(500)}`, b: "{{{{" });
    expect(nestsDeeperThan(text, 1)).toBe(false);
    expect(parseBoundedJson(text, { maxDepth: 1 })).toMatchObject({ ok: true });
  });

  it("leaves text over maxChars (default 64 KiB) as too-large", () => {
    const big = JSON.stringify({ a: "x".repeat(MAX_VALUE_BYTES) });
    expect(parseBoundedJson(big)).toEqual({ ok: false, reason: "too-large" });
    expect(parseBoundedJson('"abcdef"', { maxChars: 4 })).toEqual({
      ok: false,
      reason: "too-large",
    });
  });

  it("reports text that is not JSON as invalid-json", () => {
    expect(parseBoundedJson("{broken")).toEqual({ ok: false, reason: "invalid-json" });
  });
});
