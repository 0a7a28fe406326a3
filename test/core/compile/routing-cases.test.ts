import { describe, expect, it } from "vitest";
import { normalizeCountry, parseMap, resolveRoute, serializeMap } from "../../../core/index.js";
import { buildMap, ROUTING_CASES } from "../../cases/routing-cases.js";

describe("shared routing cases through core resolveRoute", () => {
  it.each(ROUTING_CASES)("$name", (c) => {
    const text = serializeMap(
      buildMap(c.map, { rev: 7, originOf: (p) => `https://${p}.origin.example.com` }),
    );
    const map = parseMap(text);
    expect(map).not.toBeNull();
    if (!map) return;
    const country = normalizeCountry(c.cfCountry);
    const route = resolveRoute(map, country);
    expect({
      country,
      pool: route.pool,
      source: route.source,
      degraded: route.degraded,
    }).toEqual(c.expect);
    expect(route.origin).toBe(`https://${c.expect.pool}.origin.example.com`);
  });
});
