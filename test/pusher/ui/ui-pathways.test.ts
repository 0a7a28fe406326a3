import { describe, expect, it } from "vitest";
import { compile } from "../../../core/index.js";
import { toUiPathways } from "../../../pusher/ui/ui-pathways.js";
import { opts, snap } from "../../helpers/snapshot.js";

/** fra-1 in eu-central, ams-1 in eu-west, par-1 unhealthy; CH fenced to eu-central, ZA to nowhere. */
const KV = {
  "pool/fra-1": { origin: "https://fra-1.example.net", region: "eu-central" },
  "pool/ams-1": { origin: "https://ams-1.example.net", region: "eu-west" },
  "pool/par-1": { origin: "https://par-1.example.net", region: "eu-west" },
  "health/fra-1": { status: "healthy" },
  "health/ams-1": { status: "healthy" },
  "health/par-1": { status: "unhealthy" },
  "country/_default": { primary: "fra-1", fallbacks: ["ams-1"] },
  "country/DE": { primary: "fra-1", fallbacks: ["par-1", "ams-1"] },
  "country/BR": { primary: "ams-1", fallbacks: ["fra-1"] },
  "country/US": { primary: "fra-1", fallbacks: ["ams-1"], weights: { "fra-1": 80, "ams-1": 20 } },
  "fence/eu": { countries: ["CH"], continents: [], regions: ["eu-central"], floor: "fra-1" },
  "fence/mars": { countries: ["ZA"], continents: [], regions: ["mars"], floor: "fra-1" },
  epoch: "2",
};

// docs/reference.md §15: the orders /ui shows are the steering manifests' (core's splitPathwayOrders).
describe("toUiPathways", () => {
  it("groups countries by the pathway orders their viewers get, without unhealthy or out-of-fence pools", () => {
    const groups = toUiPathways(compile(snap(KV), opts()).map);
    expect(groups).toEqual([
      // DE's par-1 is unhealthy: DE gets _default's order.
      {
        shares: [{ pool: "fra-1", weight: 100, order: ["fra-1", "ams-1"] }],
        countries: ["_default", "DE"],
      },
      { shares: [{ pool: "ams-1", weight: 100, order: ["ams-1", "fra-1"] }], countries: ["BR"] },
      // CH is fenced to eu-central: ams-1 (eu-west) is never offered.
      { shares: [{ pool: "fra-1", weight: 100, order: ["fra-1"] }], countries: ["CH"] },
      // US splits 80/20: each share's viewers get their own pool first.
      {
        shares: [
          { pool: "fra-1", weight: 80, order: ["fra-1", "ams-1"] },
          { pool: "ams-1", weight: 20, order: ["ams-1", "fra-1"] },
        ],
        countries: ["US"],
      },
      // No pool inside the fence: the steering server answers 503, so no order.
      { shares: [], countries: ["ZA"] },
    ]);
    expect(JSON.stringify(groups)).not.toContain("example.net");
  });

  it("follows health: a pool that turns unhealthy leaves every order", () => {
    const groups = toUiPathways(
      compile(snap({ ...KV, "health/ams-1": { status: "unhealthy" } }), opts()).map,
    );
    for (const g of groups) for (const s of g.shares) expect(s.order).not.toContain("ams-1");
    // US's split has one pool left: its viewers get what BR's and CH's get.
    expect(groups.find((g) => g.countries.includes("BR"))).toEqual({
      shares: [{ pool: "fra-1", weight: 100, order: ["fra-1"] }],
      countries: ["_default", "BR", "CH", "DE", "US"],
    });
  });
});
