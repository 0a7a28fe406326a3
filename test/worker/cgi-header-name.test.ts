import { describe, expect, it } from "vitest";
import { cgiHeaderName } from "../../worker/cgi-header-name.js";
import { isEdgeHeader } from "../../worker/edge-headers.js";
import { isForwardingClaim } from "../../worker/forwarding-headers.js";

describe("cgiHeaderName", () => {
  it.each([
    ["X-Edge-Country", "x-edge-country"],
    ["X_Edge_Country", "x-edge-country"],
    ["x_EDGE-country", "x-edge-country"],
    ["Accept", "accept"],
    ["__", "--"],
  ])("%s → %s", (name, want) => {
    expect(cgiHeaderName(name)).toBe(want);
  });
});

describe("isEdgeHeader", () => {
  it.each(["x-edge-pool", "X_Edge_Pool", "X-EDGE_ATTR_TIER", "x_edge_debug_token", "x-edge-"])(
    "%s is the edge's",
    (name) => {
      expect(isEdgeHeader(name)).toBe(true);
    },
  );

  it.each(["x-edgy", "x_edgepool", "edge-pool", "y-edge-pool", "x-forwarded-for"])(
    "%s is not",
    (name) => {
      expect(isEdgeHeader(name)).toBe(false);
    },
  );
});

describe("isForwardingClaim: what a client may never send on to an origin", () => {
  it.each([
    "forwarded",
    "x-forwarded-for",
    "x_forwarded_for",
    "X-Forwarded_Host",
    "x-forwarded-anything",
    "x-real-ip",
    "x-real_ip",
    "X_REAL_IP",
    "true_client_ip",
    "x_edge_country",
    "x-edge-attr-tokenizer",
    "cf_connecting_ip",
    "CF_IPCountry",
    "cf-connecting_ip",
  ])("%s is refused", (name) => {
    expect(isForwardingClaim(name)).toBe(true);
  });

  it.each([
    "accept",
    "x_request_tag",
    "x-forwarded",
    "forwarded_by",
    "x-real-ip-note",
    // Cloudflare's own spelling: set (and replaced when a client sent it) by Cloudflare.
    "cf-connecting-ip",
    "cf-ipcountry",
    "cf-ray",
  ])("%s passes", (name) => {
    expect(isForwardingClaim(name)).toBe(false);
  });
});
