/**
 * The shared table of `routes` documents, hostile and odd: the Worker's zod-free check
 * (`parseMapShape`) and the pusher's zod schema (`parseMap`) must agree on every row in Node,
 * and the Worker in workerd must act on each as the row says.
 */

/** What the Worker must make of a document. */
export type MapShapeVerdict =
  /** Not a compiled map: no-map before a good one, stale-map after (the good one is kept). */
  | { readonly kind: "rejected" }
  /**
   * A compiled map: it routes; `weighted` says whether the default route keeps its weights,
   * `shed` the default route's one shed share (null: no shed, no `X-Edge-Shed`), `degraded` the
   * route's reason.
   */
  | {
      readonly kind: "accepted";
      readonly rev: number;
      readonly weighted: boolean;
      readonly shed: number | null;
      readonly degraded: string | null;
      /** Whose shed it is, when the route says (`X-Edge-Shed: ams-1:40;by=viewers`). */
      readonly shedBy?: "viewers";
    };

/** One row: a document as text and the verdict. */
export interface MapShapeCase {
  readonly name: string;
  readonly text: string;
  readonly verdict: MapShapeVerdict;
}

type Doc = Record<string, unknown>;

const REJECTED: MapShapeVerdict = { kind: "rejected" };

/**
 * Every row, each built from `good` (a serialized map with a one-link default route and no
 * countries, weights or problems) so only the named flaw differs. Accepted rows get revisions
 * from 100 up, in order, so each one supersedes the row before it in a Worker that takes them
 * in table order.
 */
export function mapShapeCases(good: string): MapShapeCase[] {
  const g = (): Doc => JSON.parse(good) as Doc;
  const edit = (f: (d: Doc) => void, d: Doc = g()) => {
    f(d);
    return JSON.stringify(d);
  };
  const route = (d: Doc) => d.default as Doc;
  const link = (d: Doc) => (route(d).chain as Doc[])[0] as Doc;
  const origin = (JSON.parse(good) as { default: { origin: string } }).default.origin;
  const weightsOn = (d: Doc, weights: unknown) => {
    route(d).weights = weights;
  };
  const rejected = (name: string, text: string): MapShapeCase => ({
    name,
    text,
    verdict: REJECTED,
  });
  let nextRev = 100;
  const shedOn = (d: Doc, shed: unknown) => {
    route(d).shed = shed;
  };
  const accepted = (
    name: string,
    f: (d: Doc) => void,
    weighted = false,
    shed: number | null = null,
    degraded: string | null = null,
    shedBy?: "viewers",
  ): MapShapeCase => {
    const rev = nextRev++;
    return {
      name,
      text: edit((d) => {
        d.rev = rev;
        f(d);
      }),
      verdict: {
        kind: "accepted",
        rev,
        weighted,
        shed,
        degraded,
        ...(shedBy ? { shedBy } : {}),
      },
    };
  };
  return [
    rejected("empty string", ""),
    rejected("whitespace", "   \n"),
    rejected("null", "null"),
    rejected("true", "true"),
    rejected("a number", "42"),
    rejected("a string", '"routes"'),
    rejected("an empty object", "{}"),
    rejected("an empty array", "[]"),
    rejected("an array of maps", `[${good}]`),
    rejected("truncated JSON", good.slice(0, Math.floor(good.length / 2))),
    rejected("one byte short", good.slice(0, -1)),
    rejected("a BOM in front", `\uFEFF${good}`),
    rejected("trailing garbage", `${good}}`),
    rejected("NUL bytes", "\u0000\u0000"),
    rejected("deeply nested arrays", "[".repeat(200_000)),
    rejected("a huge unterminated string", `{"v":1,"x":"${"a".repeat(3_000_000)}`),
    rejected(
      "v: 2",
      edit((d) => (d.v = 2)),
    ),
    rejected(
      "v as a string",
      edit((d) => (d.v = "1")),
    ),
    rejected(
      "rev as a string",
      edit((d) => (d.rev = String(d.rev))),
    ),
    rejected(
      "rev negative",
      edit((d) => (d.rev = -1)),
    ),
    rejected(
      "rev fractional",
      edit((d) => (d.rev = 1.5)),
    ),
    rejected("rev 1e400 (Infinity)", good.replace(/"rev":\d+/, '"rev":1e400')),
    rejected("rev beyond 2^53", good.replace(/"rev":\d+/, '"rev":9007199254740993')),
    rejected(
      "no rev",
      edit((d) => delete d.rev),
    ),
    rejected(
      "epoch null",
      edit((d) => (d.epoch = null)),
    ),
    rejected(
      "compiled_at a number",
      edit((d) => (d.compiled_at = 0)),
    ),
    rejected(
      "no default",
      edit((d) => delete d.default),
    ),
    rejected(
      "default null",
      edit((d) => (d.default = null)),
    ),
    rejected(
      "default an array",
      edit((d) => (d.default = [])),
    ),
    rejected(
      "countries an array",
      edit((d) => (d.countries = [d.default])),
    ),
    rejected(
      "countries null",
      edit((d) => (d.countries = null)),
    ),
    rejected(
      "no countries",
      edit((d) => delete d.countries),
    ),
    rejected(
      "a country route as a string",
      edit((d) => (d.countries = { DE: "fra-1" })),
    ),
    rejected(
      "one bad country among good ones",
      edit((d) => (d.countries = { DE: d.default, FR: { ...route(d), chain: [] } })),
    ),
    rejected(
      "an empty chain",
      edit((d) => (route(d).chain = [])),
    ),
    rejected(
      "a chain of 17",
      edit((d) => (route(d).chain = Array(17).fill(link(d)))),
    ),
    rejected(
      "chain not an array",
      edit((d) => (route(d).chain = { pool: "x" })),
    ),
    rejected(
      "a chain link null",
      edit((d) => (route(d).chain = [null])),
    ),
    rejected(
      "a chain link without origin",
      edit((d) => delete link(d).origin),
    ),
    rejected(
      "a chain link's origin not a URL",
      edit((d) => (link(d).origin = "fra-1")),
    ),
    rejected(
      "a chain link's pool empty",
      edit((d) => (link(d).pool = "")),
    ),
    rejected(
      "origin not a URL",
      edit((d) => (route(d).origin = "not a url")),
    ),
    rejected(
      "origin only whitespace",
      edit((d) => (route(d).origin = " \t ")),
    ),
    rejected(
      "pool empty",
      edit((d) => (route(d).pool = "")),
    ),
    rejected(
      "pool a number",
      edit((d) => (route(d).pool = 7)),
    ),
    rejected(
      "no source",
      edit((d) => delete route(d).source),
    ),
    rejected(
      "no degraded",
      edit((d) => delete route(d).degraded),
    ),
    rejected(
      "degraded unknown",
      edit((d) => (route(d).degraded = "on-fire")),
    ),
    rejected(
      "degraded a map-state reason",
      edit((d) => (route(d).degraded = "stale-map")),
    ),
    rejected(
      "problems a string",
      edit((d) => (d.problems = "x")),
    ),
    rejected(
      "a problem that is a number",
      edit((d) => (d.problems = ["x", 1])),
    ),
    rejected(
      "history negative",
      edit((d) => (d.history = -1)),
    ),
    rejected(
      "history null",
      edit((d) => (d.history = null)),
    ),
    // Pool names, origins and `source` land in headers: header-unsafe text rejects the map.
    rejected(
      "CR/LF in source",
      edit((d) => (route(d).source = "country/DE\r\nSet-Cookie: a=1")),
    ),
    rejected(
      "a lone LF in a country's source",
      edit((d) => (d.countries = { DE: { ...route(d), source: "country/DE\n" } })),
    ),
    rejected(
      "a NUL in source",
      edit((d) => (route(d).source = "country/\u0000DE")),
    ),
    rejected(
      "a DEL in source",
      edit((d) => (route(d).source = "country/DE\u007f")),
    ),
    rejected(
      "CR/LF in the route's pool",
      edit((d) => (route(d).pool = "fra-1\r\nX-Evil: 1")),
    ),
    rejected(
      "a bell in a chain link's pool",
      edit((d) => (link(d).pool = "fra\u00071")),
    ),
    rejected(
      "a Latin-1 pool name",
      edit((d) => (route(d).pool = "fr\u00e9-1")),
    ),
    rejected(
      "a pool name beyond Latin-1",
      edit((d) => (link(d).pool = "fra-\u2713")),
    ),
    rejected(
      "a control character in the origin",
      edit((d) => (route(d).origin = `${origin}/\u0001`)),
    ),
    rejected(
      "an escape in a chain link's origin",
      edit((d) => (link(d).origin = `${origin}/\u001b[2J`)),
    ),
    rejected(
      "a non-ASCII origin host",
      edit((d) => (route(d).origin = "https://vid\u00e9o.example")),
    ),
    accepted("as written", () => undefined),
    accepted("no history (older pushers): history 0", (d) => delete d.history),
    accepted("unknown fields are ignored", (d) => {
      d.extra = { deep: [1, 2] };
      route(d).note = "x";
      link(d).region = "eu";
    }),
    accepted("kept junk never rejects", (d) => (d.kept = { DE: { primary: 7 } })),
    accepted("kept not an object never rejects", (d) => (d.kept = "x")),
    accepted("sheds junk never rejects", (d) => (d.sheds = { "fra-1": { share: "x" } })),
    accepted("sheds not an object never rejects", (d) => (d.sheds = 7)),
    accepted(
      "a valid shed is kept",
      (d) => {
        weightsOn(d, [{ pool: link(d).pool, weight: 600 }]);
        shedOn(d, [{ pool: link(d).pool, share: 40 }]);
      },
      true,
      40,
    ),
    accepted(
      "a shed by the country's viewers is kept, and says so",
      (d) => {
        weightsOn(d, [{ pool: link(d).pool, weight: 600 }]);
        shedOn(d, [{ pool: link(d).pool, share: 40, by: "viewers" }]);
      },
      true,
      40,
      null,
      "viewers",
    ),
    accepted("a shed by anyone else: no shed", (d) =>
      shedOn(d, [{ pool: link(d).pool, share: 40, by: "moon" }]),
    ),
    accepted("a shed of 0: no shed", (d) => shedOn(d, [{ pool: link(d).pool, share: 0 }])),
    accepted("a shed over 100: no shed", (d) => shedOn(d, [{ pool: link(d).pool, share: 101 }])),
    accepted("a shed as a string: no shed", (d) => shedOn(d, [{ pool: link(d).pool, share: "4" }])),
    accepted("a shed without pool: no shed", (d) => shedOn(d, [{ share: 40 }])),
    accepted("shed not an array: no shed", (d) => shedOn(d, { pool: "a", share: 40 })),
    accepted("shed empty: no shed", (d) => shedOn(d, [])),
    accepted(
      "degraded all-pools-slow",
      (d) => (route(d).degraded = "all-pools-slow"),
      false,
      null,
      "all-pools-slow",
    ),
    accepted("an origin in surrounding whitespace", (d) => {
      route(d).origin = `  ${origin}\n`;
      link(d).origin = `\t${origin} `;
    }),
    accepted("a path on the origin is still a URL", (d) => (route(d).origin = `${origin}/x?q`)),
    accepted("a __proto__ country is skipped", (d) => {
      d.countries = JSON.parse(
        `{"__proto__":{"pool":7},"constructor":${JSON.stringify(d.default)}}`,
      );
    }),
    accepted(
      "valid weights are kept",
      (d) => weightsOn(d, [{ pool: link(d).pool, weight: 1000 }]),
      true,
    ),
    accepted("weights null: unweighted", (d) => weightsOn(d, null)),
    accepted("weights empty: unweighted", (d) => weightsOn(d, [])),
    accepted("a weight of 0: unweighted", (d) => weightsOn(d, [{ pool: "a", weight: 0 }])),
    accepted("a weight over 1000: unweighted", (d) => weightsOn(d, [{ pool: "a", weight: 1001 }])),
    accepted("a fractional weight: unweighted", (d) => weightsOn(d, [{ pool: "a", weight: 1.5 }])),
    accepted("a weight as a string: unweighted", (d) => weightsOn(d, [{ pool: "a", weight: "5" }])),
    accepted("a weight without pool: unweighted", (d) => weightsOn(d, [{ weight: 5 }])),
    accepted("CR/LF in a weight's pool: unweighted", (d) =>
      weightsOn(d, [{ pool: `${link(d).pool}\r\nX-Evil: 1`, weight: 5 }]),
    ),
    accepted("CR/LF inside an origin are dropped, as the URL parser does", (d) => {
      route(d).origin = origin.replace("//", "//\r\n");
    }),
    accepted("17 weights: unweighted", (d) =>
      weightsOn(
        d,
        Array.from({ length: 17 }, (_, i) => ({ pool: `p${i}`, weight: 1 })),
      ),
    ),
    accepted("market attributes", (d) => {
      route(d).attrs = { tier: "gold", "cdn-host": "cdn-eu.example.com", tokenizer: "ko kr" };
    }),
    // Attributes become origin request headers: a bad one rejects the map (last known good).
    rejected(
      "an attribute value with CR/LF",
      edit((d) => (route(d).attrs = { tier: "gold\r\nX-Evil: 1" })),
    ),
    rejected(
      "an attribute value with non-ASCII",
      edit((d) => (route(d).attrs = { tier: "göld" })),
    ),
    rejected(
      "an attribute value over 128 characters",
      edit((d) => (route(d).attrs = { tier: "g".repeat(129) })),
    ),
    rejected(
      "an attribute name that is not a header token",
      edit((d) => (route(d).attrs = { "Tier: x": "gold" })),
    ),
    rejected(
      "an attribute value that is not a string",
      edit((d) => (route(d).attrs = { tier: 7 })),
    ),
    rejected(
      "nine attributes",
      edit(
        (d) =>
          (route(d).attrs = Object.fromEntries(
            Array.from({ length: 9 }, (_, i) => [`a${i}`, "x"]),
          )),
      ),
    ),
    rejected(
      "attrs an array",
      edit((d) => (route(d).attrs = ["tier"])),
    ),
    accepted("a fenced route", (d) => {
      route(d).fence = "eu";
    }),
    // The fence name becomes the X-Edge-Fence header: anything but a DNS label rejects the map.
    rejected(
      "a fence name with CR/LF",
      edit((d) => (route(d).fence = "eu\r\nX-Evil: 1")),
    ),
    rejected(
      "a fence name in upper case",
      edit((d) => (route(d).fence = "EU")),
    ),
    rejected(
      "an empty fence name",
      edit((d) => (route(d).fence = "")),
    ),
    rejected(
      "a fence name that is not a string",
      edit((d) => (route(d).fence = 1)),
    ),
    rejected(
      "fence-unsatisfiable without a fence",
      edit((d) => (route(d).degraded = "fence-unsatisfiable")),
    ),
  ];
}
