import { describe, expect, it } from "vitest";
import { cacheKeyUrl, marketSegment } from "../../../worker/cache/cache-key.js";

const NONE = new Set<string>();

describe("cacheKeyUrl", () => {
  it("keys on the public scheme, host, path and query, under the edge's own namespace", () => {
    expect(cacheKeyUrl("https://video.example.com/a/seg-1.ts?q=1", NONE, "-")).toBe(
      "https://video.example.com/__edge/cache/-/a/seg-1.ts?q=1",
    );
  });

  it("leaves out the ignored parameters in any case and spelling, keeping the rest in order", () => {
    const ignore = new Set(["token", "expires"]);
    expect(
      cacheKeyUrl("https://v.example/s.ts?b=2&Token=x&a=1&expires=9&tok%65n=y", ignore, "-"),
    ).toBe("https://v.example/__edge/cache/-/s.ts?b=2&a=1");
    expect(cacheKeyUrl("https://v.example/s.ts?token=x", ignore, "-")).toBe(
      "https://v.example/__edge/cache/-/s.ts",
    );
  });

  it("puts the market in the key, so markets never share", () => {
    const de = marketSegment({ market: "de", tier: "gold plus" });
    const at = marketSegment({ market: "at", tier: "gold plus" });
    expect(de).not.toBe(at);
    expect(de).toBe(marketSegment({ tier: "gold plus", market: "de" }));
    expect(marketSegment(undefined)).toBe("-");
    expect(marketSegment({})).toBe("-");
    expect(cacheKeyUrl("https://v.example/s.ts", NONE, de)).toBe(
      `https://v.example/__edge/cache/${de}/s.ts`,
    );
    expect(de).not.toContain("/");
  });

  it("returns null for a URL that does not parse", () => {
    expect(cacheKeyUrl("not a url", NONE, "-")).toBeNull();
  });
});
