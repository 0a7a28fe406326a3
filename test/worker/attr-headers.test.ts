import { describe, expect, it } from "vitest";
import { attrHeaders } from "../../worker/attr-headers.js";

describe("attrHeaders: a route's attrs as origin-request headers", () => {
  it("names them X-Edge-Attr-*, in name order, with the values a Headers object holds", () => {
    const list = attrHeaders({ tokenizer: "de", "cdn-host": "cdn.example.com", tier: " gold " });
    expect(list).toEqual([
      { name: "X-Edge-Attr-cdn-host", lower: "x-edge-attr-cdn-host", value: "cdn.example.com" },
      { name: "X-Edge-Attr-tier", lower: "x-edge-attr-tier", value: "gold" },
      { name: "X-Edge-Attr-tokenizer", lower: "x-edge-attr-tokenizer", value: "de" },
    ]);
  });

  it("works a route's list out once, and has none for a route without attrs", () => {
    const attrs = { tier: "gold" };
    expect(attrHeaders(attrs)).toBe(attrHeaders(attrs));
    expect(attrHeaders(undefined)).toEqual([]);
  });
});
