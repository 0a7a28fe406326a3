import { describe, expect, it } from "vitest";
import { decodeSnapshot } from "../../../core/index.js";
import { P, snap, world } from "../../helpers/snapshot.js";

function problemsFor(kv: Record<string, unknown>) {
  return decodeSnapshot(snap(kv), P).problems;
}

describe("decodeSnapshot validation", () => {
  it("accepts a valid world with no problems", () => {
    const s = decodeSnapshot(snap(world()), P);
    expect(s.problems).toEqual([]);
    expect(s.countries.get("DE")).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    expect(s.epoch).toBe(7);
  });

  it.each<[string, unknown, string, RegExp]>([
    ["country/DE", "{not json", "invalid-json", /invalid JSON/],
    ["country/DE", { primary: 5 }, "invalid-value", /primary/],
    ["country/DE", { primary: "fra-1", fallbacks: "ams-1" }, "invalid-value", /fallbacks/],
    ["country/DE", { primary: "Fra", fallbacks: [] }, "invalid-value", /pool name/],
    [
      "country/DE",
      { primary: "fra-1", fallbacks: ["a", "b", "c", "d", "e", "f", "g", "h", "i"] },
      "invalid-value",
      /at most 8/,
    ],
    [
      "country/DE",
      { primary: "fra-1", fallbacks: ["ams-1", "ams-1"] },
      "invalid-value",
      /duplicate/,
    ],
    [
      "country/DE",
      { primary: "fra-1", fallbacks: ["fra-1"] },
      "invalid-value",
      /repeats the primary/,
    ],
    ["country/DE", { primary: "fra-1", extra: 1 }, "invalid-value", /extra|nrecognized/],
    ["country/DE", [], "invalid-value", /object|expected/i],
    ["override/DE", { primary: "fra-1", reason: 5 }, "invalid-value", /reason/],
    ["pool/fra-1", { origin: "ftp://x.example" }, "invalid-value", /scheme/],
    ["pool/fra-1", { origin: "https://x.example/path" }, "invalid-value", /path/],
    ["pool/fra-1", { origin: "https://x.example?q=1" }, "invalid-value", /query/],
    ["pool/fra-1", { origin: "https://u:p@x.example" }, "invalid-value", /credentials/],
    ["pool/fra-1", { origin: "fra-1.example" }, "invalid-value", /absolute URL/],
    ["pool/fra-1", {}, "invalid-value", /origin/],
    ["pool/fra-1", { origin: "https://203.0.113.7" }, "ip-literal-origin", /origin: .*1003/],
    ["pool/fra-1", { origin: "http://[2001:db8::1]:8080" }, "ip-literal-origin", /DNS name/],
    ["health/fra-1", { status: "up" }, "invalid-value", /status/],
    ["health/fra-1", { status: "healthy", p90_ms: -1 }, "invalid-value", /p90_ms/],
    ["epoch", "seven", "invalid-epoch", /decimal integer/],
    ["country/ZZ", { primary: "fra-1" }, "invalid-key", /ISO 3166-1/],
    ["pool/BAD_NAME", { origin: "https://x.example" }, "invalid-key", /DNS label/],
    ["junk/thing", "x", "unknown-key", /unknown key/],
    ["country/DE", new Uint8Array([0xff, 0xfe, 0x00]), "not-utf8", /UTF-8/],
    ["country/DE", "x".repeat(64 * 1024 + 1), "too-large", /64 KiB/],
  ])("%s = %j → %s", (key, value, code, message) => {
    const problems = problemsFor(world({ [key]: value }));
    const p = problems.find((x) => x.key === key);
    expect(p, JSON.stringify(problems)).toBeDefined();
    expect(p?.code).toBe(code);
    expect(p?.message).toMatch(message);
  });

  it("accepts a value of exactly 64 KiB in size class (padding with spaces)", () => {
    const json = JSON.stringify({ primary: "fra-1", fallbacks: [] });
    const padded = json + " ".repeat(64 * 1024 - json.length);
    expect(problemsFor(world({ "country/DE": padded }))).toEqual([]);
  });

  it("reports a missing _default", () => {
    const kv = world();
    delete kv["country/_default"];
    const problems = problemsFor(kv);
    expect(problems).toContainEqual(
      expect.objectContaining({ key: "country/_default", code: "missing-default" }),
    );
  });

  it("accepts a bare origin with a trailing slash and a port", () => {
    expect(problemsFor(world({ "pool/fra-1": { origin: "http://127.0.0.1:9101/" } }))).toEqual([]);
  });

  it.each([
    ["https://FRA-1.Example.NET", "https://fra-1.example.net"],
    ["https://fra-1.example.net:443/", "https://fra-1.example.net"],
    ["http://fra-1.example.net:80", "http://fra-1.example.net"],
    ["http://[::1]:9101", "http://[::1]:9101"],
  ])("accepts the origin %s, normalized to %s", (origin, normalized) => {
    const s = decodeSnapshot(snap(world({ "pool/fra-1": { origin } })), P);
    expect(s.problems).toEqual([]);
    expect(s.pools.get("fra-1")?.origin).toBe(normalized);
  });

  it.each(["https://x.example.net/./", "https://x.example.net/..", "https://x.example.net/a"])(
    "rejects the origin %s, whose path URL parsing would fold away",
    (origin) => {
      const problems = problemsFor(world({ "pool/fra-1": { origin } }));
      expect(problems).toContainEqual(
        expect.objectContaining({ key: "pool/fra-1", code: "invalid-value" }),
      );
    },
  );

  it("ignores the lock key and keys outside the prefix", () => {
    const s = decodeSnapshot(
      {
        revision: 1,
        entries: [
          { key: `${P}lock/apply`, value: "holder-1" },
          { key: "/elsewhere/country/DE", value: "garbage" },
        ],
      },
      P,
    );
    expect(s.problems.map((p) => p.code)).toEqual(["missing-default"]);
  });

  it("takes override/continent/K over override/K when both are valid, else the valid one", () => {
    const rule = (primary: string) => ({ primary, fallbacks: [] });
    const both = decodeSnapshot(
      snap(world({ "override/EU": rule("ams-1"), "override/continent/EU": rule("par-1") })),
      P,
    );
    expect(both.continentOverrides.get("EU")).toEqual({
      key: "override/continent/EU",
      rule: rule("par-1"),
    });
    const plainOnly = decodeSnapshot(
      snap(world({ "override/EU": rule("ams-1"), "override/continent/EU": { primary: 5 } })),
      P,
    );
    expect(plainOnly.continentOverrides.get("EU")).toEqual({
      key: "override/EU",
      rule: rule("ams-1"),
    });
    expect(plainOnly.problems.map((p) => p.key)).toEqual(["override/continent/EU"]);
  });

  it("decodes duplicate entries of one key as the last one says", () => {
    const s = decodeSnapshot(
      {
        revision: 3,
        entries: [
          ...snap(world()).entries,
          { key: `${P}country/FR`, value: "{", modRevision: 1 },
          { key: `${P}country/FR`, value: '{"primary":"par-1","fallbacks":[]}', modRevision: 2 },
        ],
      },
      P,
    );
    expect(s.countries.get("FR")).toEqual({ primary: "par-1", fallbacks: [] });
    expect(s.invalidCountries.has("FR")).toBe(false);
  });
});
