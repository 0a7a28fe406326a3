import { type CmcdData, decodeCmcd, fromCmcdHeaders } from "@svta/cml-cmcd";
import { SfItem } from "@svta/cml-structured-field-values";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type PlayerReport, playerReport } from "../../../worker/observe/player-report.js";

const at = (path: string, headers: Record<string, string> = {}) =>
  playerReport(new Request(`https://edge.test${path}`, { headers }));

describe("playerReport (CMCD, CTA-5004)", () => {
  it("reads bs and mtp from the CMCD-* headers, in any spelling of their names", () => {
    expect(at("/s.m4s", { "cmcd-status": "bs", "CMCD-REQUEST": "mtp=25400,dl=18500" })).toEqual({
      starved: true,
      throughputKbps: 25400,
    });
    expect(at("/s.m4s", { "CMCD-Status": "bs=?0" }).starved).toBe(false);
  });

  it("reads the CMCD query parameter, which wins over headers", () => {
    const q = encodeURIComponent('bs,mtp=1200,sid="abc"');
    expect(at(`/s.m4s?x=1&CMCD=${q}#frag`, { "CMCD-Request": "mtp=9000" })).toEqual({
      starved: true,
      throughputKbps: 1200,
    });
  });

  it("takes a CMCD v2 inner-list mtp by its first item", () => {
    expect(at("/s.m4s", { "CMCD-Request": "mtp=(8500 7000)" }).throughputKbps).toBe(8500);
  });

  it("reads steering throughput (bit/s) when the player sends no mtp", () => {
    expect(at("/steer?_HLS_pathway=a&_HLS_throughput=4200000").throughputKbps).toBe(4200);
    expect(at("/steer?_DASH_throughput=800000").throughputKbps).toBe(800);
    expect(at("/steer?_HLS_throughput=lots").throughputKbps).toBeNull();
  });

  it("counts malformed or absurd CMCD as not sent", () => {
    expect(at("/s.m4s", { "CMCD-Status": 'bs,"open' })).toEqual({
      starved: null,
      throughputKbps: null,
    });
    expect(at("/s.m4s", { "CMCD-Request": "mtp=-5" }).throughputKbps).toBeNull();
    expect(at(`/s.m4s?CMCD=${encodeURIComponent("bs=5")}`).starved).toBeNull();
    expect(at("/s.m4s")).toEqual({ starved: null, throughputKbps: null });
  });
});

/** CMCD's `mtp` as the report reads it, from a CTA-5004 library's decoding (with or without a v2 inner list). */
function referenceMtp(value: unknown): number | null {
  const first = Array.isArray(value)
    ? value[0]
    : value instanceof SfItem && Array.isArray(value.value)
      ? value.value[0]
      : value;
  const n = first instanceof SfItem ? first.value : first;
  return typeof n === "number" && Number.isFinite(n) && n > 0 && n < 1e10 ? n : null;
}

/** What @svta/cml-cmcd (the reference decoder of CTA-5004) makes of the same request. */
function reference(data: () => CmcdData): PlayerReport {
  let d: CmcdData | null;
  try {
    d = data();
  } catch {
    d = null;
  }
  return {
    starved: typeof d?.bs === "boolean" ? d.bs : null,
    throughputKbps: referenceMtp(d?.mtp),
  };
}

const sfKey = fc
  .stringMatching(/^[a-z*][a-z0-9_.*-]{0,5}$/)
  .filter((k) => k !== "bs" && k !== "mtp");
const sfBare = fc.oneof(
  fc.integer({ min: -999_999, max: 999_999 }).map(String),
  fc.tuple(fc.nat(99_999), fc.nat(999)).map(([a, b]) => `${a}.${b}`),
  fc.stringMatching(/^[ !#-[\]-~]{0,8}$/).map((s) => `"${s}"`),
  fc.constantFrom('"a,b=c"', '"q\\"x"', '"back\\\\slash"', '"(1 2)"'),
  fc.stringMatching(/^[a-zA-Z*][a-zA-Z0-9:/!#$%&'*+.^_`|~-]{0,6}$/),
  fc.constantFrom("?0", "?1", ":aGVsbG8=:", "::"),
);
const sfParams = fc
  .array(
    fc
      .tuple(sfKey, fc.option(sfBare, { nil: undefined }))
      .map(([k, v]) => (v === undefined ? `;${k}` : `;${k}=${v}`)),
    { maxLength: 2 },
  )
  .map((ps) => ps.join(""));
const sfItem = fc.tuple(sfBare, sfParams).map(([v, p]) => v + p);
const sfInner = fc.array(sfItem, { maxLength: 3 }).map((items) => `(${items.join(" ")})`);
const otherMember = fc.oneof(
  fc.tuple(sfKey, sfParams).map(([k, p]) => k + p),
  fc.tuple(sfKey, fc.oneof(sfItem, sfInner)).map(([k, v]) => `${k}=${v}`),
);
const bsMember = fc.constantFrom("bs", "bs=?0", "bs=?1", "bs=5", 'bs="x"', "bs=tok");
const mtpMember = fc.oneof(
  fc.integer({ min: -10, max: 2_000_000 }).map((n) => `mtp=${n}`),
  fc.tuple(fc.nat(99_999), fc.nat(999)).map(([a, b]) => `mtp=${a}.${b}`),
  fc
    .array(fc.integer({ min: -10, max: 99_999 }), { maxLength: 3 })
    .map((ns) => `mtp=(${ns.join(" ")})`),
  fc.constantFrom('mtp="9000"', "mtp=?1", "mtp", "mtp=(tok 5)"),
);
/** A CMCD dictionary: its members in any order, sometimes broken as a player might break it. */
const cmcdText = fc
  .tuple(
    fc.array(fc.oneof(bsMember, mtpMember, otherMember), { minLength: 1, maxLength: 5 }),
    fc.constantFrom(",", ", ", " ,", ",,"),
    fc.constantFrom("", "", "", " x", "=", '"', "(", ";"),
  )
  .map(([members, sep, damage]) => members.join(sep) + damage);

describe("playerReport reads CMCD as a CTA-5004 library does", () => {
  it("agrees with @svta/cml-cmcd on any CMCD query parameter", () => {
    fc.assert(
      fc.property(cmcdText, (text) => {
        const got = at(`/s.m4s?CMCD=${encodeURIComponent(text)}`);
        expect(got).toEqual(reference(() => decodeCmcd(text)));
      }),
      { numRuns: 2000 },
    );
  });

  it("agrees with @svta/cml-cmcd on any CMCD-* headers, a key in a later header winning", () => {
    const names = ["CMCD-Object", "CMCD-Request", "CMCD-Session", "CMCD-Status"];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...names), cmcdText), { maxLength: 3 }),
        (sent) => {
          const headers = new Headers();
          for (const [name, text] of sent) headers.set(name, text);
          const got = playerReport(new Request("https://edge.test/s.m4s", { headers }));
          expect(got).toEqual(reference(() => fromCmcdHeaders(headers)));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
