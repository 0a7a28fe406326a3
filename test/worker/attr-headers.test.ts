import { describe, expect, it } from "vitest";
import { canonicalString } from "../../core/contract/edge-signature.js";
import { attrHeaders, signedAttrLines } from "../../worker/attr-headers.js";

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

describe("signedAttrLines: the signature's attribute lines of a route", () => {
  it("is what the canonical string ends with, and nothing for a route without attrs", () => {
    const list = attrHeaders({ tokenizer: "de", "cdn-host": "cdn.example.com" });
    const fields = {
      t: 1,
      method: "GET",
      host: "v.example",
      pathAndQuery: "/a",
      pool: "p",
      country: "DE",
      revision: "7",
    };
    const attrs = list.map((a) => [a.name, a.value] as const);
    expect(canonicalString({ ...fields, attrs })).toBe(
      `1\nGET\nv.example\n/a\np\nDE\n7${signedAttrLines(list)}`,
    );
    expect(signedAttrLines(list)).toBe(
      "\nx-edge-attr-cdn-host:cdn.example.com\nx-edge-attr-tokenizer:de",
    );
    expect(signedAttrLines(attrHeaders(undefined))).toBe("");
  });
});
