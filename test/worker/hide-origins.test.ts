import { describe, expect, it } from "vitest";
import {
  dropOriginCookieDomain,
  hideOriginsInHeaders,
  publicOriginOf,
  rewriteOriginUrls,
  type UrlHeader,
} from "../../worker/hide-origins.js";
import { originHostsOf } from "../../worker/origin-hosts.js";
import { buildMap } from "../cases/routing-cases.js";

const HOSTS = new Set(["fra-1.origin.example.com", "ams-1.origin.example.com", "10.0.0.7"]);
const PUB = publicOriginOf("https://video.example.com/watch?v=1");
const rewrite = (v: string) => rewriteOriginUrls(v, (h) => HOSTS.has(h), PUB);

describe("rewriteOriginUrls", () => {
  it.each([
    ["https://fra-1.origin.example.com/login", "https://video.example.com/login"],
    ["http://FRA-1.Origin.Example.com.:8443/a?b=1#c", "https://video.example.com/a?b=1#c"],
    ["//ams-1.origin.example.com/x", "//video.example.com/x"],
    ["https://user:pw@fra-1.origin.example.com/x", "https://video.example.com/x"],
    ["http://10.0.0.7:9000", "https://video.example.com"],
    ["0; url=https://ams-1.origin.example.com/r", "0; url=https://video.example.com/r"],
    [
      "<https://fra-1.origin.example.com/a.css>; rel=preload, <https://cdn.example.net/b>; rel=next",
      "<https://video.example.com/a.css>; rel=preload, <https://cdn.example.net/b>; rel=next",
    ],
    ["/next?u=https://fra-1.origin.example.com/", "/next?u=https://video.example.com/"],
  ])("%s → %s", (input, want) => {
    expect(rewrite(input)).toBe(want);
  });

  it.each([
    "https://cdn.example.net/next",
    "https://fra-1.origin.example.com.evil.net/x",
    "https://evil.net/fra-1.origin.example.com",
    "/relative/path",
    "file:///etc/hosts",
    "https://[::1]:8443/",
  ])("leaves %s alone", (input) => {
    expect(rewrite(input)).toBe(input);
  });
});

describe("rewriteOriginUrls: an origin spelled any way a browser follows", () => {
  const map = buildMap(
    {
      default: { chain: ["v6-1", "v4-1"], source: "country/_default" },
      countries: { DE: { chain: ["fra-1"], source: "country/DE" } },
    },
    {
      rev: 1,
      originOf: (p) =>
        ({
          "v6-1": "http://[::1]:8080",
          "v4-1": "http://127.0.0.1:9000",
          "fra-1": "https://fra-1.origin.example.com",
        })[p] ?? "",
    },
  );
  const hosts = originHostsOf(map, []);
  const rewriteAny = (v: string) => rewriteOriginUrls(v, (h) => hosts.has(h), PUB);

  it.each([
    ["http://[0:0:0:0:0:0:0:1]:8080/x", "https://video.example.com/x"],
    ["http://[0000::0001]/x", "https://video.example.com/x"],
    ["HTTP://[::1]:80/x", "https://video.example.com/x"],
    ["<http://[0:0::1]:8080/a.css>; rel=preload", "<https://video.example.com/a.css>; rel=preload"],
    ["0; url=http://[::0001]:8080/r", "0; url=https://video.example.com/r"],
    ["http://127.1:9000/x", "https://video.example.com/x"],
    ["http://0x7f.0.0.1/x", "https://video.example.com/x"],
    ["http://2130706433:9000/x", "https://video.example.com/x"],
    ["http://[::ffff:127.0.0.1]:9000/x", "https://video.example.com/x"],
    ["https://FRA-1.ORIGIN.EXAMPLE.COM.:443/x", "https://video.example.com/x"],
    ["https://fra%2D1.origin.example.com/x", "https://video.example.com/x"],
    ["https:\\\\fra-1.origin.example.com/x", "https://video.example.com/x"],
  ])("%s → %s", (input, want) => {
    expect(rewriteAny(input)).toBe(want);
  });

  it.each(["http://[::2]:8080/x", "http://127.0.0.2:9000/x", "https://fra-2.origin.example.com/"])(
    "leaves %s alone",
    (input) => {
      expect(rewriteAny(input)).toBe(input);
    },
  );

  it.each([
    ["a=1; Domain=0x7f.0.0.1", "a=1"],
    ["a=1; Domain=[0:0:0:0:0:0:0:1]", "a=1"],
    ["a=1; Domain=0:0::1", "a=1"],
    ["a=1; Domain=FRA-1.origin.example.com.", "a=1"],
  ])("drops the origin cookie domain in %s", (cookie, want) => {
    expect(dropOriginCookieDomain(cookie, hosts, "video.example.com")).toBe(want);
  });
});

describe("hideOriginsInHeaders: origin URLs only the URL parser finds", () => {
  const hidden = (name: UrlHeader, value: string, pub = PUB) => {
    const h = new Headers({ [name]: value });
    hideOriginsInHeaders(h, HOSTS, pub);
    return h.get(name);
  };

  it.each([
    ["https:///fra-1.origin.example.com/x?q=1#f", "https://video.example.com/x?q=1#f"],
    ["///fra-1.origin.example.com/x", "https://video.example.com/x"],
    ["https:\\\\\\fra-1.origin.example.com/x", "https://video.example.com/x"],
    ["/\\/fra-1.origin.example.com/x", "https://video.example.com/x"],
    ["/\t/fra-1.origin.example.com/x", "https://video.example.com/x"],
    ["https://fra-\t1.origin.example.com/x", "https://video.example.com/x"],
    ["https://fra-1.origin.exa\tmple.com:8443/x", "https://video.example.com/x"],
    ["http:fra-1.origin.example.com/x", "https://video.example.com/x"],
    ["http:/fra-1.origin.example.com/x", "https://video.example.com/x"],
    ["HTTP:\\\\10.0.0.7:9000/x", "https://video.example.com/x"],
  ])("Location %j → %s", (value, want) => {
    expect(hidden("location", value)).toBe(want);
    expect(hidden("content-location", value)).toBe(want);
  });

  it.each([
    [
      "<https:///fra-1.origin.example.com/a.css>; rel=preload, <///ams-1.origin.example.com/b.js>; rel=preload",
      "<https://video.example.com/a.css>; rel=preload, <https://video.example.com/b.js>; rel=preload",
    ],
    [
      "</\t/fra-1.origin.example.com/c>; rel=next, </rel>; rel=prev",
      "<https://video.example.com/c>; rel=next, </rel>; rel=prev",
    ],
    [
      "< http:fra-1.origin.example.com/d >; rel=preload",
      "<https://video.example.com/d>; rel=preload",
    ],
  ])("Link %j → %s", (value, want) => {
    expect(hidden("link", value)).toBe(want);
  });

  it.each([
    ["0; url=https:///fra-1.origin.example.com/r", "0; url=https://video.example.com/r"],
    ["5;URL='/\t/ams-1.origin.example.com/r'", "5;URL='https://video.example.com/r'"],
    [
      '1 , url = "///fra-1.origin.example.com/r" tail',
      '1 , url = "https://video.example.com/r" tail',
    ],
    ["0, http:fra-1.origin.example.com/r", "0, https://video.example.com/r"],
    ["0.5;https:\\\\\\ams-1.origin.example.com/r", "0.5;https://video.example.com/r"],
  ])("Refresh %j → %s", (value, want) => {
    expect(hidden("refresh", value)).toBe(want);
  });

  it.each([
    // Same scheme as the page, no slashes: a path on the public host, as a browser reads it.
    ["location", "https:fra-1.origin.example.com/x"],
    ["location", "fra-1.origin.example.com/x"],
    ["location", "https://fra-1.origin.example.com@evil.net/x"],
    ["location", "https://evil.net/\t/fra-1.origin.example.com/x"],
    ["link", "<fra-1.origin.example.com/x>; rel=preload"],
    // Not a refresh (no time), and a refresh whose "url" is a relative path ("urx=…").
    ["refresh", "url=///fra-1.origin.example.com/r"],
    ["refresh", "0; urx=///fra-1.origin.example.com/r"],
  ] as const)("leaves %s %j alone", (name, value) => {
    expect(hidden(name, value)).toBe(value);
  });

  it("reads a scheme-less http: URL against the page's own scheme", () => {
    const plain = publicOriginOf("http://video.example.com/watch");
    // From an http page, `http:host/x` is a path; `https:host/x` leaves for the origin.
    expect(hidden("location", "http:fra-1.origin.example.com/x", plain)).toBe(
      "http:fra-1.origin.example.com/x",
    );
    expect(hidden("location", "https:fra-1.origin.example.com/x", plain)).toBe(
      "http://video.example.com/x",
    );
  });
});

describe("dropOriginCookieDomain", () => {
  it.each([
    ["a=1; Domain=fra-1.origin.example.com; Path=/", "a=1; Path=/"],
    ["a=1; domain=.FRA-1.origin.example.com", "a=1"],
    ["a=1; Domain=origin.example.com", "a=1"],
    ["a=1; Domain=example.com; Path=/", "a=1; Domain=example.com; Path=/"],
    ["a=1; Domain=video.example.com", "a=1; Domain=video.example.com"],
    ["a=1; Domain=10.0.0.7", "a=1"],
    ["a=1; Path=/; Secure", "a=1; Path=/; Secure"],
    ["domain=fra-1.origin.example.com; Path=/", "domain=fra-1.origin.example.com; Path=/"],
  ])("%s → %s", (cookie, want) => {
    expect(dropOriginCookieDomain(cookie, HOSTS, "video.example.com")).toBe(want);
  });
});

describe("hideOriginsInHeaders", () => {
  it("rewrites the URL headers and every Set-Cookie line, nothing else", () => {
    const h = new Headers();
    h.set("Location", "https://fra-1.origin.example.com/x");
    h.set("X-Served-By", "fra-1.origin.example.com");
    h.append("Set-Cookie", "a=1; Domain=fra-1.origin.example.com");
    h.append("Set-Cookie", "b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT");
    hideOriginsInHeaders(h, HOSTS, PUB);
    expect(h.get("location")).toBe("https://video.example.com/x");
    expect(h.getSetCookie()).toEqual(["a=1", "b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT"]);
    // A header the edge cannot know to carry a host stays as the origin sent it (documented).
    expect(h.get("x-served-by")).toBe("fra-1.origin.example.com");
  });
});

describe("originHostsOf", () => {
  it("covers every route and chain of the map plus the extra routes (decided, floor)", () => {
    const map = buildMap(
      {
        default: { chain: ["ams-1", "par-1"], source: "country/_default" },
        countries: { DE: { chain: ["fra-1"], source: "country/DE" } },
      },
      { rev: 1, originOf: (p) => `https://${p.toUpperCase()}.origin.example.com:8443` },
    );
    const floor = {
      pool: "floor-1",
      origin: "https://floor-1.example.net",
      chain: [{ pool: "floor-1", origin: "https://floor-1.example.net" }],
      source: "floor",
      degraded: null,
    };
    expect([...originHostsOf(map, [map.default])].sort()).toEqual([
      "ams-1.origin.example.com",
      "fra-1.origin.example.com",
      "par-1.origin.example.com",
    ]);
    expect(originHostsOf(map, [map.default, floor]).has("floor-1.example.net")).toBe(true);
    expect(originHostsOf(map, [map.default]).has("floor-1.example.net")).toBe(false);
    expect([...originHostsOf(null, [floor])]).toEqual(["floor-1.example.net"]);
  });
});
