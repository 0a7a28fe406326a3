/** Valid ISO codes the baseline world does not use (fresh keys for bad values). */
export const FRESH_CODES = [
  "AR",
  "CL",
  "CO",
  "PE",
  "VE",
  "EG",
  "NG",
  "KE",
  "MA",
  "DZ",
  "SA",
  "AE",
  "IL",
  "IQ",
  "PK",
  "BD",
  "TH",
  "VN",
  "MY",
  "SG",
  "ID",
  "PH",
  "KR",
  "CN",
  "TW",
  "HK",
  "NZ",
  "IS",
  "EE",
  "LV",
  "LT",
  "SK",
  "SI",
  "HR",
  "RS",
  "BG",
  "KZ",
  "GE",
  "UY",
  "PY",
] as const;

/** One malformed etcd value: a key relative to the prefix and raw bytes. */
export interface BadValue {
  readonly rel: string;
  readonly value: Buffer;
  readonly kind: string;
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const text = (s: string) => Buffer.from(s, "utf8");

/** Bad rule values: each is invalid on its own, whatever key it lands on. */
function badRule(i: number): { kind: string; value: Buffer } {
  const variants: { kind: string; value: Buffer }[] = [
    { kind: "invalid JSON", value: text(`{"primary":"fra-1",fallbacks:[${i}`) },
    { kind: "wrong type", value: json({ primary: 42, fallbacks: [] }) },
    { kind: "wrong type", value: json(["fra-1", "ams-1"]) },
    { kind: "wrong type", value: json("fra-1") },
    { kind: "wrong type", value: json({ primary: "fra-1", fallbacks: "ams-1" }) },
    { kind: "wrong type", value: text("null") },
    { kind: "unknown pool", value: json({ primary: `nope-${i}`, fallbacks: [] }) },
    { kind: "unknown pool", value: json({ primary: "fra-1", fallbacks: [`ghost-${i}`] }) },
    { kind: "cycle", value: json({ primary: "fra-1", fallbacks: ["ams-1", "fra-1"] }) },
    { kind: "cycle", value: json({ primary: "ams-1", fallbacks: ["par-1", "par-1"] }) },
    {
      kind: "9+ fallbacks",
      value: json({
        primary: "fra-1",
        fallbacks: ["ams-1", "par-1", "waw-1", "mad-1", "a-1", "b-1", "c-1", "d-1", "e-1"],
      }),
    },
    {
      kind: "over 64 KiB",
      value: json({ primary: "fra-1", fallbacks: [], note: "x".repeat(66_000 + i) }),
    },
    { kind: "binary", value: Buffer.from([0xff, 0xfe, 0x00, 0x80 + (i % 64), 0xc3, 0x28]) },
    { kind: "unknown field", value: json({ primary: "fra-1", fallbacks: [], weight: i }) },
    { kind: "bad pool name", value: json({ primary: "FRA_1", fallbacks: [] }) },
  ];
  return variants[i % variants.length] as { kind: string; value: Buffer };
}

/**
 * 200 malformed values on distinct keys: bad rules on fresh countries and on overrides of good
 * ones, bad country codes, bad pool and health definitions for unused pools, unknown keys, a bad
 * epoch, and bad rules written over five good countries (they must keep their routes).
 */
export function badValues(goodCountries: readonly string[]): BadValue[] {
  const out: BadValue[] = [];
  let i = 0;
  const add = (rel: string, v: { kind: string; value: Buffer }) => out.push({ rel, ...v });
  for (const cc of FRESH_CODES) add(`country/${cc}`, badRule(i++));
  for (const cc of FRESH_CODES) add(`override/${cc}`, badRule(i++));
  for (const cc of goodCountries) add(`override/${cc}`, badRule(i++));
  for (const cc of goodCountries.slice(0, 5)) add(`country/${cc}`, badRule(i++));
  const badCodes = [
    "ZZ",
    "QQ",
    "AA",
    "de",
    "DEU",
    "D",
    "1A",
    "D1",
    "XK",
    "EU",
    "UK",
    "__default",
    "_DEFAULT",
    "d e",
    "DE ",
    "%44%45",
    "..",
    "country",
  ];
  for (const code of badCodes)
    add(`country/${code}`, {
      kind: "bad country code",
      value: json({ primary: "fra-1", fallbacks: [] }),
    });
  for (const code of badCodes.slice(0, 8))
    add(`override/${code}`, {
      kind: "bad country code",
      value: json({ primary: "fra-1", fallbacks: [], reason: "x" }),
    });
  const badOrigins = [
    "ftp://x.example.net",
    "https://x.example.net/path",
    "https://u:p@x.example.net",
    "https://x.example.net?q=1",
    "javascript:alert(1)",
    "not a url",
    "https://x.example.net#f",
    "//x.example.net",
  ];
  for (let k = 0; k < 16; k++) {
    add(`pool/spare-${k}`, {
      kind: "bad origin",
      value: json({ origin: badOrigins[k % badOrigins.length], region: k % 2 ? 5 : "eu" }),
    });
  }
  for (const name of ["FRA-1", "fra_1", "-x", "x-", "a".repeat(64), "dots.are.bad"]) {
    add(`pool/${name}`, {
      kind: "bad pool name",
      value: json({ origin: "https://x.example.net" }),
    });
  }
  const badHealth = [
    { status: "ok" },
    { status: "healthy", p90_ms: -1 },
    { status: "healthy", extra: 1 },
    "healthy",
    { status: null },
  ];
  for (let k = 0; k < 15; k++)
    add(`health/spare-${k}`, { kind: "bad health", value: json(badHealth[k % badHealth.length]) });
  for (const name of ["Spare-X", "spare_y"])
    add(`health/${name}`, { kind: "bad pool name", value: json({ status: "healthy" }) });
  add("epoch", { kind: "bad epoch", value: text("not-a-number") });
  let u = 0;
  while (out.length < 200) {
    const rel =
      [
        `unknown-${u}`,
        `countries/DE${u}`,
        `pools/x${u}`,
        `country`,
        `meta/${u}`,
        `v2/country/DE${u}`,
      ][u % 6] ?? `u${u}`;
    if (!out.some((b) => b.rel === rel))
      add(rel, { kind: "unknown key", value: text(`{"u":${u}}`) });
    u += 1;
  }
  return out.slice(0, 200);
}

/** One malformed desired-state file and what its error must name. */
export interface BadFile {
  readonly kind: string;
  readonly content: string | Buffer;
  /** The problem the CLI must name (matched against its stderr). */
  readonly expect: RegExp;
}

const POOLS_YAML = `pools:\n  fra-1: { origin: https://fra-1.example.net }\n  ams-1: { origin: https://ams-1.example.net }\n  par-1: { origin: https://par-1.example.net }\n`;

/** 200 malformed desired-state files, each with a distinct defect marker. */
export function badFiles(): BadFile[] {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const out: BadFile[] = [];
  const gens: ((i: number) => BadFile)[] = [
    (i) => ({
      kind: "YAML syntax",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1\n  DE${i}: [`,
      expect: /syntax error/,
    }),
    (i) => ({
      kind: "JSON syntax",
      content: `{"pools": {"fra-1": {"origin": "https://fra-1.example.net"}}, "countries": {"_default": ${i}`,
      expect: /syntax error/,
    }),
    (i) => ({
      kind: "duplicate key",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1 }\n  DE: { primary: fra-1 }\n  DE: { primary: par-${i} }\n`,
      expect: /duplicate key/,
    }),
    (i) => ({
      kind: "wrong type",
      content: `pools: [${i}]\ncountries:\n  _default: { primary: ams-1 }\n`,
      expect: /pools/,
    }),
    (i) => ({
      kind: "wrong type",
      content: `${POOLS_YAML}countries: "DE-${i}"\n`,
      expect: /countries/,
    }),
    (i) => ({
      kind: "unknown pool",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1 }\n  DE: { primary: nope-${i} }\n`,
      expect: new RegExp(`countries\\.DE\\.primary.*nope-${i}`),
    }),
    (i) => ({
      kind: "unknown pool",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1, fallbacks: [par-1, gone-${i}] }\n`,
      expect: new RegExp(`countries\\._default\\.fallbacks\\[1\\].*gone-${i}`),
    }),
    (i) => {
      const code = ["ZZ", "QQ", "de", "DEU", "1A", "UK", "EU", "D"][i % 8] ?? "ZZ";
      return {
        kind: "bad country code",
        content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1 }\n  "${code}": { primary: fra-1 }\n`,
        expect: new RegExp(`countries\\.${esc(code)}\\b`),
      };
    },
    (i) => ({
      kind: "9+ fallbacks",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1 }\n  FR: { primary: fra-1, fallbacks: [${Array.from({ length: 9 + (i % 3) }, (_, k) => `p${k}-${i}`).join(", ")}] }\n`,
      expect: /countries\.FR\.fallbacks/,
    }),
    (i) => ({
      kind: "cycle",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1 }\n  NL: { primary: fra-1, fallbacks: [ams-1, fra-1] }\n# ${i}\n`,
      expect: /countries\.NL\.fallbacks\[1\].*repeats/,
    }),
    (i) => ({
      kind: "duplicate fallback",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1, fallbacks: [par-1, par-1] }\n# ${i}\n`,
      expect: /countries\._default\.fallbacks\[1\].*duplicate/,
    }),
    (i) => {
      const origin =
        [
          "ftp://x.example.net",
          "https://x.example.net/p",
          "https://u:p@x.example.net",
          "https://x.example.net?q=1",
          "mailto:a@b.c",
          "x",
        ][i % 6] ?? "x";
      return {
        kind: "bad origin",
        content: `pools:\n  fra-1: { origin: "${origin}" }\n  ams-1: { origin: https://ams-1.example.net }\ncountries:\n  _default: { primary: ams-1 }\n`,
        expect: /pools\.fra-1\.origin/,
      };
    },
    (i) => {
      const name = ["FRA-1", "fra_1", "-x", "x-", "dots.no", "UP"][i % 6] ?? "UP";
      return {
        kind: "bad pool name",
        content: `pools:\n  "${name}": { origin: https://x.example.net }\n  ams-1: { origin: https://ams-1.example.net }\ncountries:\n  _default: { primary: ams-1 }\n`,
        expect: new RegExp(`pools\\.${esc(name)}`),
      };
    },
    (i) => ({
      kind: "missing _default",
      content: `${POOLS_YAML}countries:\n  DE: { primary: fra-1 }\n# ${i}\n`,
      expect: /countries\._default/,
    }),
    (i) => ({
      kind: "unknown top-level key",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1 }\nextra_${i}: 1\n`,
      expect: new RegExp(`extra_${i}`),
    }),
    (i) => ({
      kind: "unknown rule field",
      content: `${POOLS_YAML}countries:\n  _default: { primary: ams-1, weight_${i}: 3 }\n`,
      expect: new RegExp(`countries\\._default.*weight_${i}|weight_${i}.*countries\\._default`),
    }),
    (i) => ({
      kind: "wrong region type",
      content: `pools:\n  fra-1: { origin: https://fra-1.example.net, region: ${i} }\n  ams-1: { origin: https://ams-1.example.net }\ncountries:\n  _default: { primary: ams-1 }\n`,
      expect: /pools\.fra-1\.region/,
    }),
    (i) => ({
      kind: "not a mapping",
      content: ["", "42", "- a\n- b\n", "null", "'just a string'"][i % 5] ?? "",
      expect: /\(file\)/,
    }),
    (i) => ({
      kind: "binary",
      content: Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80 + (i % 60), 0x7b, 0x5b]),
      expect: /syntax error|\(file\)|not valid/,
    }),
    (i) => ({
      kind: "alias bomb",
      content: `a: &a [x${i}, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\npools: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n`,
      expect: /alias/i,
    }),
  ];
  for (let i = 0; out.length < 200; i++)
    out.push((gens[i % gens.length] as (i: number) => BadFile)(i));
  return out;
}
