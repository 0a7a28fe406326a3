import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hmacHex } from "../../../core/contract/edge-signature.js";
import {
  canonicalString,
  parseSignatureHeader,
  type SignedFields,
  signEdgeRequest,
  verifyEdgeSignature,
} from "../../../core/index.js";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const T = Math.floor(NOW / 1000);

const FIELDS: SignedFields = {
  t: T,
  method: "GET",
  host: "video.example.com",
  pathAndQuery: "/v/1/seg-3.ts?q=hd",
  pool: "fra-1",
  country: "DE",
  revision: "4211",
  attrs: [
    ["x-edge-attr-tokenizer", "de"],
    ["x-edge-attr-cdn-host", "cdn-eu.example.com"],
  ],
};

/** The request as the origin receives it: its own Host, the public one in X-Forwarded-Host. */
function originRequest(
  signature: string,
  over: Record<string, string> = {},
  path = FIELDS.pathAndQuery,
) {
  return new Request(`http://10.0.0.7:8080${path}`, {
    method: "GET",
    headers: {
      "X-Edge-Signature": signature,
      "X-Forwarded-Host": "video.example.com",
      "X-Edge-Pool": "fra-1",
      "X-Edge-Country": "DE",
      "X-Edge-Revision": "4211",
      "X-Edge-Attr-Tokenizer": "de",
      "X-Edge-Attr-Cdn-Host": "cdn-eu.example.com",
      ...over,
    },
  });
}

describe("canonicalString", () => {
  it("puts one field per line, the method upper-case, the host lower-case, attributes sorted", () => {
    expect(canonicalString({ ...FIELDS, method: "get", host: "Video.Example.COM" })).toBe(
      [
        String(T),
        "GET",
        "video.example.com",
        "/v/1/seg-3.ts?q=hd",
        "fra-1",
        "DE",
        "4211",
        "x-edge-attr-cdn-host:cdn-eu.example.com",
        "x-edge-attr-tokenizer:de",
      ].join("\n"),
    );
  });
});

/** HMAC-SHA-256 by Node's own crypto, an implementation independent of Web Crypto. */
function nodeHex(secret: string, data: string): string {
  return createHmac("sha256", secret).update(data).digest("hex");
}

describe("hmacHex", () => {
  it("gives RFC 4231's HMAC-SHA-256 test vector", async () => {
    expect(await hmacHex("Jefe", "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });

  it("hashes a secret longer than a block first, as HMAC does", async () => {
    const long = "k".repeat(131);
    expect(await hmacHex(long, "data")).toBe(nodeHex(long, "data"));
    expect(await hmacHex(long, "data")).not.toBe(await hmacHex("k".repeat(130), "data"));
  });

  it("matches Node's HMAC for any secret and text, in any order of secrets and lengths", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            secret: fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }),
            data: fc.oneof(
              fc.string({ unit: "grapheme", maxLength: 200 }),
              // Longer than a key block, in several blocks.
              fc.string({ unit: "grapheme", minLength: 1200, maxLength: 3000 }),
            ),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        async (cases) => {
          for (const { secret, data } of cases) {
            expect(await hmacHex(secret, data)).toBe(nodeHex(secret, data));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("keeps each secret's key apart when two alternate (a rotation)", async () => {
    const text = canonicalString(FIELDS);
    const [a, b] = await Promise.all([hmacHex("current", text), hmacHex("previous", text)]);
    expect(await hmacHex("current", text)).toBe(a);
    expect(a).toBe(nodeHex("current", text));
    expect(b).toBe(nodeHex("previous", text));
  });
});

describe("signEdgeRequest and verifyEdgeSignature", () => {
  it("verifies what the edge signed, with the secret or with any accepted secret", async () => {
    const sig = await signEdgeRequest(FIELDS, ["new-secret"]);
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(await verifyEdgeSignature(originRequest(sig), ["new-secret"], { now: NOW })).toBe(true);
    expect(await verifyEdgeSignature(originRequest(sig), ["old", "new-secret"], { now: NOW })).toBe(
      true,
    );
  });

  it("signs with the current and the previous secret during a rotation", async () => {
    const sig = await signEdgeRequest(FIELDS, ["new-secret", "old-secret"]);
    expect(parseSignatureHeader(sig)?.v1).toHaveLength(2);
    expect(await verifyEdgeSignature(originRequest(sig), ["old-secret"], { now: NOW })).toBe(true);
    expect(await verifyEdgeSignature(originRequest(sig), ["new-secret"], { now: NOW })).toBe(true);
  });

  it("fails for a wrong secret, no secret, a missing or garbled header", async () => {
    const sig = await signEdgeRequest(FIELDS, ["s"]);
    expect(await verifyEdgeSignature(originRequest(sig), ["t"], { now: NOW })).toBe(false);
    expect(await verifyEdgeSignature(originRequest(sig), [], { now: NOW })).toBe(false);
    const bare = new Request("http://10.0.0.7/v/1/seg-3.ts?q=hd");
    expect(await verifyEdgeSignature(bare, ["s"], { now: NOW })).toBe(false);
    for (const garbled of [
      "",
      "t=1",
      "v1=ab",
      `t=x,${sig.split(",")[1]}`,
      `t=1,t=2,${sig.split(",")[1]}`,
      "nonsense",
    ]) {
      expect(await verifyEdgeSignature(originRequest(garbled), ["s"], { now: NOW })).toBe(false);
    }
  });

  it("fails when anything it covers was changed on the way", async () => {
    const sig = await signEdgeRequest(FIELDS, ["s"]);
    const tampered: Array<[Record<string, string>, string?]> = [
      [{ "X-Edge-Pool": "iad-1" }],
      [{ "X-Edge-Country": "US" }],
      [{ "X-Edge-Revision": "4212" }],
      [{ "X-Forwarded-Host": "evil.example.com" }],
      [{ "X-Edge-Attr-Tokenizer": "en" }],
      [{ "X-Edge-Attr-Tier": "gold" }],
      [{}, "/v/1/seg-3.ts?q=sd"],
      [{}, "/v/2/seg-3.ts?q=hd"],
    ];
    for (const [over, path] of tampered) {
      expect(await verifyEdgeSignature(originRequest(sig, over, path), ["s"], { now: NOW })).toBe(
        false,
      );
    }
    const post = new Request(originRequest(sig), { method: "POST", body: "x" });
    expect(await verifyEdgeSignature(post, ["s"], { now: NOW })).toBe(false);
  });

  it("fails for a signature older than maxAgeSeconds (300 by default) or from the future", async () => {
    const sig = await signEdgeRequest(FIELDS, ["s"]);
    const at = (seconds: number) => ({ now: NOW + seconds * 1000 });
    expect(await verifyEdgeSignature(originRequest(sig), ["s"], at(300))).toBe(true);
    expect(await verifyEdgeSignature(originRequest(sig), ["s"], at(301))).toBe(false);
    expect(await verifyEdgeSignature(originRequest(sig), ["s"], at(-301))).toBe(false);
    expect(
      await verifyEdgeSignature(originRequest(sig), ["s"], { ...at(60), maxAgeSeconds: 30 }),
    ).toBe(false);
  });
});
