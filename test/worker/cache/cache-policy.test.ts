import { describe, expect, it } from "vitest";
import { cachePolicy, parseDirectives } from "../../../worker/cache/cache-policy.js";

const policy = (headers: Record<string, string>, status = 200, staleIfErrorS = 0) =>
  cachePolicy(status, new Headers(headers), staleIfErrorS);

describe("cachePolicy", () => {
  it.each([
    [{ "cache-control": "public, max-age=60" }, 60],
    [{ "cache-control": "max-age=60, s-maxage=300" }, 300],
    [{ "cache-control": "max-age=600", "cdn-cache-control": "max-age=30" }, 30],
    [
      {
        "cache-control": "max-age=600",
        "cdn-cache-control": "max-age=30",
        "cloudflare-cdn-cache-control": "max-age=5",
      },
      5,
    ],
    [{ "cache-control": "no-store", "cdn-cache-control": "max-age=30" }, 30],
    [{ "cache-control": "max-age=60", age: "20" }, 40],
    [{ "CACHE-CONTROL": "Max-Age=60" }, 60],
  ])("%o is fresh for %i s", (headers, freshS) => {
    const p = policy(headers);
    expect(p.storable && p.freshS).toBe(freshS);
  });

  it.each([
    [{ "cache-control": "max-age=60", "set-cookie": "a=b" }, "set-cookie"],
    [{ "cache-control": "private, max-age=60" }, "private"],
    [{ "cache-control": "private", "cdn-cache-control": "max-age=60" }, "private"],
    [{ "cache-control": "no-store, max-age=60" }, "no-store"],
    [{ "cache-control": "max-age=600", "cdn-cache-control": "no-store" }, "no-store"],
    [{ "cache-control": "no-cache, max-age=60" }, "no-cache"],
    [{ "cache-control": "public" }, "no-freshness"],
    [{ "cache-control": "max-age=60", age: "60" }, "no-freshness"],
    [{ "cdn-cache-control": "public", "cache-control": "max-age=60" }, "no-freshness"],
    [{}, "no-freshness"],
    [{ "cache-control": "max-age=60", vary: "Accept, *" }, "vary-star"],
  ])("%o is not kept (%s)", (headers, reason) => {
    expect(policy(headers)).toEqual({ storable: false, reason });
  });

  it("keeps only a 200", () => {
    for (const status of [206, 301, 404, 500]) {
      expect(policy({ "cache-control": "max-age=60" }, status)).toEqual({
        storable: false,
        reason: "status",
      });
    }
  });

  it("takes stale-if-error from the governing field, else the setting", () => {
    const own = policy({ "cache-control": "max-age=1, stale-if-error=30" }, 200, 5);
    expect(own.storable && own.staleIfErrorS).toBe(30);
    const setting = policy({ "cache-control": "max-age=1" }, 200, 5);
    expect(setting.storable && setting.staleIfErrorS).toBe(5);
  });

  it.each([
    ["max-age=2, must-revalidate", 0],
    ["max-age=2, Proxy-Revalidate", 0],
    ["max-age=2, must-revalidate, stale-if-error=30", 30],
  ])("%s: the setting never serves a copy older than the origin allows (%i s stale)", (cc, s) => {
    const p = policy({ "cache-control": cc }, 200, 5);
    expect(p.storable && p.staleIfErrorS).toBe(s);
  });

  it("reads Expires against Date when no freshness field is there", () => {
    const p = policy({
      date: "Mon, 07 Dec 2026 00:00:00 GMT",
      expires: "Mon, 07 Dec 2026 00:01:00 GMT",
    });
    expect(p.storable && p.freshS).toBe(60);
    expect(policy({ expires: "0" })).toEqual({ storable: false, reason: "no-freshness" });
  });

  it("lists the Vary names in lower case", () => {
    const p = policy({ "cache-control": "max-age=1", vary: "Accept-Encoding , Origin" });
    expect(p.storable && p.vary).toEqual(["accept-encoding", "origin"]);
  });
});

describe("parseDirectives", () => {
  it("reads names in any case, quoted values, and the first of a repeated directive", () => {
    const d = parseDirectives('Max-Age=5, private="set-cookie, x", max-age=9, no-transform');
    expect(d.get("max-age")).toBe("5");
    expect(d.get("private")).toBe("set-cookie, x");
    expect(d.get("no-transform")).toBe("");
  });
});
