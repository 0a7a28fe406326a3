import { describe, expect, it } from "vitest";
import type { Route } from "../../../core/contract/compiled-map.js";
import { pathwayOrder, splitPathwayOrders } from "../../../core/contract/pathway-order.js";
import { splitRoute } from "../../../worker/split.js";

const chain = [
  { pool: "fra-1", origin: "https://fra.example" },
  { pool: "ams-1", origin: "https://ams.example" },
  { pool: "par-1", origin: "https://par.example" },
];
const route: Route = {
  pool: "fra-1",
  origin: "https://fra.example",
  chain,
  source: "country/DE",
  degraded: null,
};

describe("pathwayOrder", () => {
  it("is the route's pool, then the rest of its chain in failover order", () => {
    expect(pathwayOrder(route)).toEqual(["fra-1", "ams-1", "par-1"]);
  });

  it("drops the pools whose origin is ejected", () => {
    expect(pathwayOrder(route, (o) => o === "https://fra.example")).toEqual(["ams-1", "par-1"]);
  });

  it("answers the whole chain when every origin is ejected", () => {
    expect(pathwayOrder(route, () => true)).toEqual(["fra-1", "ams-1", "par-1"]);
  });

  it("names the route's own pool once when the chain repeats it", () => {
    const picked: Route = { ...route, pool: "ams-1", origin: "https://ams.example" };
    expect(pathwayOrder(picked)).toEqual(["ams-1", "fra-1", "par-1"]);
  });
});

describe("splitPathwayOrders", () => {
  it("is one share of the route's order for an unweighted route", () => {
    expect(splitPathwayOrders(route)).toEqual([
      { pool: "fra-1", weight: 100, order: ["fra-1", "ams-1", "par-1"] },
    ]);
  });

  const weighted: Route = {
    ...route,
    weights: [
      { pool: "fra-1", weight: 70 },
      { pool: "par-1", weight: 30 },
      { pool: "lon-1", weight: 5 },
    ],
  };

  it("gives each weighted pool of the chain its viewers' order, ignoring pools not in the chain", () => {
    expect(splitPathwayOrders(weighted)).toEqual([
      { pool: "fra-1", weight: 70, order: ["fra-1", "ams-1", "par-1"] },
      { pool: "par-1", weight: 30, order: ["par-1", "fra-1", "ams-1"] },
    ]);
  });

  it("matches the order the Worker gives each viewer of a weighted route", () => {
    const shares = splitPathwayOrders(weighted);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const viewer = splitRoute(weighted, `viewer-${i}`);
      const mine = pathwayOrder(viewer);
      const share = shares.find((s) => s.pool === viewer.pool);
      expect(share?.order).toEqual(mine);
      seen.add(viewer.pool);
    }
    expect([...seen].sort()).toEqual(["fra-1", "par-1"]);
  });
});
