import { decodeSfDict, SfItem } from "@svta/cml-structured-field-values";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cmcdMembers } from "../../../worker/observe/cmcd-members.js";

/** What a player report can read of a value: numbers and booleans, in or out of inner lists. */
function readable(value: unknown): unknown {
  const v = value instanceof SfItem ? value.value : value;
  if (Array.isArray(v)) return v.map(readable);
  return typeof v === "number" || typeof v === "boolean" ? v : "other";
}

/** The library's decoding of `text`, as {@link readable} values; `null` when it throws. */
function reference(text: string): [string, unknown][] | null {
  try {
    return Object.entries(decodeSfDict(text)).map(([k, v]) => [k, readable(v)]);
  } catch {
    return null;
  }
}

function ours(text: string): [string, unknown][] | null {
  const members = cmcdMembers(text);
  return members && [...members].map(([k, v]) => [k, readable(v)]);
}

const space = fc.constantFrom("", "", "", " ", "  ", "\t", "\u00a0");
const key = fc.oneof(
  { arbitrary: fc.stringMatching(/^[a-z*][a-z0-9_.*-]{0,4}$/), weight: 8 },
  { arbitrary: fc.constantFrom("bs", "mtp"), weight: 8 },
  { arbitrary: fc.constantFrom("A", "_x", "9"), weight: 1 },
);
const digits = (minLength: number, maxLength: number) =>
  fc.array(fc.constantFrom(..."0123456789"), { minLength, maxLength }).map((d) => d.join(""));
const sign = fc.constantFrom("", "", "-");
/** Bare items, valid and broken, at their limits. */
const bare = fc.oneof(
  { arbitrary: fc.tuple(sign, digits(1, 16)).map(([s, d]) => s + d), weight: 4 },
  {
    arbitrary: fc.tuple(sign, digits(1, 13), digits(0, 4)).map(([s, i, f]) => `${s}${i}.${f}`),
    weight: 3,
  },
  { arbitrary: fc.string({ maxLength: 8 }).map((s) => `"${s}"`), weight: 2 },
  { arbitrary: fc.stringMatching(/^"([ !#-[\]-~]|\\["\\a])*"?$/), weight: 2 },
  { arbitrary: fc.stringMatching(/^[a-zA-Z*][a-zA-Z0-9:/!#$%&'*+.^_`|~-]{0,6}$/), weight: 2 },
  { arbitrary: fc.stringMatching(/^:[A-Za-z0-9+/=\n -]{0,9}:?$/), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      "?0",
      "?1",
      "?2",
      "?",
      "@1700000000",
      "@-5",
      "@1.0",
      "@1.5",
      '%"x"',
      "1e5",
      "-",
      "1.",
    ),
    weight: 3,
  },
);
const params = fc
  .array(
    fc
      .tuple(space, key, fc.option(bare, { nil: undefined, freq: 2 }))
      .map(([sp, k, v]) => (v === undefined ? `;${sp}${k}` : `;${sp}${k}=${v}`)),
    { maxLength: 2 },
  )
  .map((ps) => ps.join(""));
const item = fc.tuple(bare, fc.oneof(fc.constant(""), params)).map(([v, p]) => v + p);
const innerList = fc
  .tuple(fc.array(item, { maxLength: 3 }), space, fc.constantFrom(")", ")", ")", ""), params)
  .map(([items, sp, close, p]) => `(${sp}${items.join(" ")}${close}${p}`);
const member = fc.oneof(
  fc.tuple(key, params).map(([k, p]) => k + p),
  fc
    .tuple(key, fc.oneof({ arbitrary: item, weight: 3 }, { arbitrary: innerList, weight: 1 }))
    .map(([k, v]) => `${k}=${v}`),
);
const separator = fc.oneof(
  { arbitrary: fc.tuple(space, space).map(([a, b]) => `${a},${b}`), weight: 8 },
  { arbitrary: fc.constantFrom(",,", ";", "", " "), weight: 1 },
);
/** CMCD text: members and separators, now and then broken as a player or a proxy might. */
const dictionary = fc
  .tuple(space, fc.array(fc.tuple(member, separator), { maxLength: 4 }), member, space)
  .map(
    ([lead, rest, last, trail]) => lead + rest.map(([m, sep]) => m + sep).join("") + last + trail,
  );

describe("cmcdMembers (a CMCD structured-field dictionary)", () => {
  it("accepts and refuses what @svta/cml-structured-field-values does, with the same numbers and booleans", () => {
    fc.assert(
      fc.property(dictionary, (text) => {
        expect(ours(text)).toEqual(reference(text));
      }),
      { numRuns: 5000 },
    );
  });

  it("reads CMCD v1 and v2 as players send them", () => {
    expect(
      ours(
        'bs,br=3200,d=4004,mtp=25400,ot=v,rtp=15000,sid="6e2fb550-c457-11e9-bb97-0800200c9a66",su',
      ),
    ).toEqual([
      ["bs", true],
      ["br", 3200],
      ["d", 4004],
      ["mtp", 25400],
      ["ot", "other"],
      ["rtp", 15000],
      ["sid", "other"],
      ["su", true],
    ]);
    expect(ours("mtp=(8500 7000);v=2, bs=?0")).toEqual([
      ["mtp", [8500, 7000]],
      ["bs", false],
    ]);
    expect(ours("")).toEqual([]);
  });

  it("refuses what is not a dictionary, naming no member", () => {
    for (const text of [
      'bs,"open',
      "mtp=",
      "bs,,mtp=1",
      "bs,",
      "mtp=(1 2",
      "mtp=1234567890123456",
      "mtp=1.2345",
      "Bs",
      "d=:!!:",
    ]) {
      expect(cmcdMembers(text), text).toBeNull();
    }
  });
});
