import { decodeSfDict, SfItem } from "@svta/cml-structured-field-values";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CmcdReadings, cmcdReadings } from "../../../worker/observe/cmcd-readings.js";

/** A value as the recording reads it: an item's value with its parameters left aside. */
function bareValue(value: unknown): unknown {
  return value instanceof SfItem ? value.value : value;
}

/** The library's decoding of `text`, narrowed to what {@link CmcdReadings} holds; `null` when it throws. */
function reference(text: string): CmcdReadings | null {
  let dict: Map<string, unknown>;
  try {
    const decoded = decodeSfDict(text);
    dict = decoded instanceof Map ? decoded : new Map(Object.entries(decoded));
  } catch {
    return null;
  }
  const out: CmcdReadings = {};
  if (dict.has("bs")) {
    const bs = bareValue(dict.get("bs"));
    out.bs = typeof bs === "boolean" ? bs : null;
  }
  if (dict.has("mtp")) {
    const mtp = bareValue(dict.get("mtp"));
    const first = Array.isArray(mtp) ? bareValue(mtp[0]) : mtp;
    out.mtp = typeof first === "number" ? first : null;
  }
  return out;
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

describe("cmcdReadings (bs and mtp of a CMCD structured-field dictionary)", () => {
  it("accepts and refuses what @svta/cml-structured-field-values does, with the same bs and mtp", () => {
    fc.assert(
      fc.property(dictionary, (text) => {
        expect(cmcdReadings(text)).toEqual(reference(text));
      }),
      { numRuns: 5000 },
    );
  });

  it("reads CMCD v1 and v2 as players send them", () => {
    const player =
      'bl=21300,br=3200,bs,cid="faec5fc2-ac30-11ea-bb37-0242ac130002",d=4004,dl=18500,mtp=48100,nor="..%2F300kbps%2Ftrack.m4v",nrr="12323-48763",ot=v,pr=1.08,rtp=12000,sf=d,sid="6e2fb550-c457-11e9-bb97-0800200c9a66",st=v,su,tb=6141';
    expect(cmcdReadings(player)).toEqual({ bs: true, mtp: 48100 });
    expect(cmcdReadings(player)).toEqual(reference(player));
    expect(cmcdReadings("mtp=(8500 7000);v=2, bs=?0")).toEqual({ mtp: 8500, bs: false });
    expect(cmcdReadings("br=3200")).toEqual({});
    expect(cmcdReadings("")).toEqual({});
  });

  it("takes the last of a repeated key, and a value of another type as none", () => {
    expect(cmcdReadings("bs=?1,mtp=10,bs=?0,mtp=20")).toEqual({ bs: false, mtp: 20 });
    expect(cmcdReadings('bs=5,mtp="fast"')).toEqual({ bs: null, mtp: null });
    expect(cmcdReadings("bs=(?1),mtp=(),x=1")).toEqual({ bs: null, mtp: null });
    expect(cmcdReadings("mtp=@1700000000;x")).toEqual({ mtp: null });
  });

  it("never reads a key out of a string or a parameter", () => {
    const text = 'sid="a,bs=?1,mtp=99",x=1;bs;mtp=5,nor="\\\\",y=?1';
    expect(cmcdReadings(text)).toEqual({});
    expect(cmcdReadings(text)).toEqual(reference(text));
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
      "mtp=(1\t2)",
    ]) {
      expect(cmcdReadings(text), text).toBeNull();
    }
  });

  it("refuses long hostile text as it refuses short (no backtracking blow-up)", () => {
    const n = 20_000;
    for (const text of [
      `mtp=(1${" ".repeat(n)}`,
      `d=:${"A ".repeat(n)}`,
      `${"a=1,".repeat(n)}bs,`,
      `x=${"(".repeat(n)}`,
      `s="${'\\"'.repeat(n)}`,
    ])
      expect(cmcdReadings(text)).toBeNull();
    expect(cmcdReadings(`${"a=1, ".repeat(n)}bs`)).toEqual({ bs: true });
  });
});
