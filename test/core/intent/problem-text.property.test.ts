import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compile,
  formatProblem,
  MAX_PROBLEM_CHARS,
  type Problem,
  safeText,
  validateDesiredState,
} from "../../../core/index.js";
import { opts, P, world } from "../../helpers/snapshot.js";

const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

// A marker no message can produce on its own ("~" appears in no message or field name), of any
// code points: controls, surrogate pairs, bidi overrides, DNS-label-looking text.
const marker = fc
  .string({ unit: "binary", minLength: 2, maxLength: 24 })
  .map((s) => `~${s.replaceAll("~", "")}~`);

/** Values that carry the marker somewhere: text, JSON strings and values, field names. */
const carrying = (m: string): fc.Arbitrary<unknown>[] => [
  fc.constant(m),
  fc.constant(`{"primary":"${m}"`),
  fc.constant({ primary: m, fallbacks: [m, m] }),
  fc.constant({ primary: "fra-1", fallbacks: [m] }),
  fc.constant({ primary: "fra-1", fallbacks: ["ams-1"], [m]: 1 }),
  fc.constant({ primary: { [m]: m } }),
  fc.constant({ origin: m }),
  fc.constant({ origin: `https://${m}.example` }),
  fc.constant({ origin: `ftp://${m}` }),
  fc.constant({ origin: "https://a.example", region: `${m}${"x".repeat(70)}` }),
  fc.constant({ status: m }),
  fc.constant({ status: "healthy", p90_ms: m }),
  fc.constant({ primary: "fra-1", reason: m.repeat(60) }),
  fc.constant({ primary: "fra-1", expires_at: m }),
  fc.constant([m]),
  fc.constant(JSON.stringify(m)),
];

const asEtcdValue = (v: unknown): string | Uint8Array =>
  typeof v === "string" ? v : JSON.stringify(v);

function expectSafe(line: string, m: string) {
  expect(line.length).toBeLessThanOrEqual(MAX_PROBLEM_CHARS);
  expect(UNSAFE.test(line)).toBe(false);
  expect(line.includes(m)).toBe(false);
  expect(line.includes(safeText(m, 10_000))).toBe(false);
}

function expectProblemsSafe(problems: readonly Problem[], m: string) {
  for (const p of problems) {
    expect(p.message.length).toBeLessThanOrEqual(MAX_PROBLEM_CHARS);
    expectSafe(formatProblem(p), m);
  }
}

const keys = [
  "country/DE",
  "country/_default",
  "override/DE",
  "pool/fra-1",
  "health/fra-1",
  "epoch",
];

describe("problem messages (property, docs/reference.md §3.6)", () => {
  it("are at most 200 characters, escape control characters and never contain the value", () => {
    const arb = marker.chain((m) =>
      fc.tuple(
        fc.constant(m),
        fc.array(fc.tuple(fc.constantFrom(...keys), fc.oneof(...carrying(m))), {
          minLength: 1,
          maxLength: 6,
        }),
      ),
    );
    fc.assert(
      fc.property(arb, ([m, entries]) => {
        const kv = world();
        for (const [key, value] of entries) kv[key] = value;
        const snapshot = {
          revision: 5,
          entries: Object.entries(kv).map(([k, v]) => ({ key: `${P}${k}`, value: asEtcdValue(v) })),
        };
        const { map, problems } = compile(snapshot, opts());
        expectProblemsSafe(problems, m);
        for (const line of map.problems) expectSafe(line, m);

        const doc: Record<string, unknown> = { pools: {}, countries: {} };
        for (const [key, value] of entries) {
          const [family] = key.split("/");
          if (family === "pool") doc.pools = { "fra-1": value };
          else if (family === "country") doc.countries = { DE: value };
        }
        const r = validateDesiredState(doc);
        if (!r.ok) expectProblemsSafe(r.problems, m);
      }),
      { numRuns: 300 },
    );
  });

  it("junk key names are escaped and cut, whatever they hold", () => {
    const junkKey = fc.oneof(
      fc.string({ unit: "binary", maxLength: 400 }),
      fc.string({ unit: "binary-ascii", minLength: 300, maxLength: 3000 }),
    );
    const family = fc.constantFrom("", "country/", "pool/", "health/", "override/", "x/");
    fc.assert(
      fc.property(fc.array(fc.tuple(family, junkKey), { maxLength: 8 }), (junk) => {
        const snapshot = {
          revision: 5,
          entries: junk.map(([f, k]) => ({ key: `${P}${f}${k}`, value: "{" })),
        };
        const { map, problems } = compile(snapshot, opts());
        for (const p of problems) expectSafe(formatProblem(p), "~never~");
        for (const line of map.problems) expectSafe(line, "~never~");
      }),
      { numRuns: 200 },
    );
  });
});

describe("safeText (property)", () => {
  it("bounds and escapes any text, keeps safe short text as it is, and is idempotent", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 500 }),
        fc.integer({ min: 1, max: 300 }),
        (text, max) => {
          const out = safeText(text, max);
          expect(out.length).toBeLessThanOrEqual(max);
          expect(UNSAFE.test(out)).toBe(false);
          if (!UNSAFE.test(text) && text.length <= max) expect(out).toBe(text);
          expect(safeText(out, max)).toBe(out);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("escapes as \\uXXXX and marks a cut with …", () => {
    expect(safeText("a\u0000b\u001b[31m\u202e\u2028")).toBe("a\\u0000b\\u001b[31m\\u202e\\u2028");
    expect(safeText("\u{e0001}x")).toBe("\\u{e0001}x");
    expect(safeText("x".repeat(300))).toBe(`${"x".repeat(199)}…`);
    expect(safeText(`${"x".repeat(195)}\u0001yyy`)).toBe(`${"x".repeat(195)}…`);
    expect(safeText(`${"x".repeat(198)}😀😀`)).toBe(`${"x".repeat(198)}…`);
  });
});
