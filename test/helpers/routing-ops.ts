import fc from "fast-check";

/** Keys of every family, valid and not, that the generated changes touch. */
const keys = [
  "country/DE",
  "country/FR",
  "country/_default",
  "country/de",
  "override/DE",
  "override/EU",
  "override/continent/EU",
  "override/continent/NA",
  "continent/EU",
  "continent/NA",
  "pool/fra-1",
  "pool/ams-1",
  "pool/Bad_Pool",
  "health/fra-1",
  "health/ams-1",
  "health/ams-1/probe-b",
  "epoch",
  "lock/apply",
  "junk/x",
  "fence/eu",
  "fence/alps",
  "fence/Bad_Name",
  "observed/DE/fra-1",
  "observed/BR/fra-1",
  "observed/BR/ams-1",
  "observed/de/fra-1",
];
const pools = ["fra-1", "ams-1", "par-1"];
const rule = fc.record({
  primary: fc.constantFrom(...pools),
  fallbacks: fc.uniqueArray(fc.constantFrom(...pools), { maxLength: 2 }),
});
const valueFor = (rel: string): fc.Arbitrary<string> => {
  const good = rel.startsWith("pool/")
    ? fc
        .record({
          origin: fc.constantFrom(...pools).map((p) => `https://${p}.example.com`),
          slow_ms: fc.option(fc.constant({ low: 200, high: 1000 }), { nil: undefined }),
          viewers: fc.option(fc.constant(true), { nil: undefined }),
        })
        .map((d) => JSON.stringify(d))
    : rel.startsWith("health/")
      ? fc
          .record({
            status: fc.constantFrom("healthy", "unhealthy"),
            p90_ms: fc.option(fc.constantFrom(100, 400, 900), { nil: undefined }),
          })
          .map((h) => JSON.stringify(h))
      : rel.startsWith("observed/")
        ? fc
            .record({
              p90_ms: fc.constantFrom(100, 500, 1200),
              samples: fc.constant(80),
              error_ratio: fc.constant(0),
            })
            .map((o) => JSON.stringify(o))
        : rel === "epoch"
          ? fc.nat(99).map(String)
          : rel.startsWith("fence/")
            ? fc
                .record({
                  countries: fc.uniqueArray(fc.constantFrom("DE", "CH", "FR"), { maxLength: 2 }),
                  continents: fc.uniqueArray(fc.constantFrom("EU", "NA"), { maxLength: 1 }),
                  regions: fc.constant(["eu-central"]),
                  floor: fc.constantFrom(...pools),
                })
                .map((f) => JSON.stringify(f))
            : rule.map((r) => JSON.stringify(r));
  return fc.oneof(
    { weight: 4, arbitrary: good },
    { weight: 1, arbitrary: fc.constantFrom("{", "7", "[]", "x") },
  );
};
/** One change: a put of a key (value chosen for its family, sometimes garbage) or a delete. */
export const op = fc
  .constantFrom(...keys)
  .chain((rel) =>
    fc.oneof(
      { weight: 3, arbitrary: valueFor(rel).map((value) => ({ rel, value }) as const) },
      { weight: 1, arbitrary: fc.constant({ rel, value: null }) },
    ),
  );
