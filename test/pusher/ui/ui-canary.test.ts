import { describe, expect, it } from "vitest";
import { compile } from "../../../core/index.js";
import { toUiCanary } from "../../../pusher/ui/ui-canary.js";
import { canaryDoc } from "../../helpers/canary-doc.js";
import { opts, snap } from "../../helpers/snapshot.js";

const stable = {
  "pool/fra-1": { origin: "https://fra-1.example.net" },
  "pool/ams-1": { origin: "https://ams-1.example.net" },
  "health/fra-1": { status: "healthy" },
  "health/ams-1": { status: "healthy" },
  "country/_default": { primary: "fra-1", fallbacks: ["ams-1"] },
  "country/DE": { primary: "fra-1", fallbacks: [] },
};

// docs/reference.md §13: the page's form of the running canary.
describe("toUiCanary", () => {
  it("lists _default first, then each changed country, stable pool beside canary pool", () => {
    const canary = canaryDoc({
      "country/_default": { primary: "ams-1", fallbacks: ["fra-1"] },
      "country/DE": { primary: "ams-1", fallbacks: [] },
    });
    const ui = toUiCanary(compile(snap({ ...stable, "canary/current": canary }), opts()));
    expect(ui?.routes).toEqual([
      {
        country: "_default",
        stable: "fra-1",
        canary: "ams-1",
        canary_chain: ["ams-1", "fra-1"],
        degraded: null,
      },
      { country: "DE", stable: "fra-1", canary: "ams-1", canary_chain: ["ams-1"], degraded: null },
    ]);
    expect(JSON.stringify(ui)).not.toContain("example.net");
  });

  it("keeps a canary that changes no route under current health, with no routes", () => {
    // ams-1 is unhealthy: DE's canary route fails over to fra-1, the stable route.
    const canary = canaryDoc({ "country/DE": { primary: "ams-1", fallbacks: ["fra-1"] } });
    const result = compile(
      snap({
        ...stable,
        "country/DE": { primary: "fra-1", fallbacks: ["ams-1"] },
        "health/ams-1": { status: "unhealthy" },
        "canary/current": canary,
      }),
      opts(),
    );
    expect(result.map.canary).toBeUndefined();
    expect(toUiCanary(result)).toMatchObject({ id: "c8", share: 10, routes: [] });
  });

  it("is null without a canary, and for a canary/current that does not decode", () => {
    expect(toUiCanary(compile(snap(stable), opts()))).toBeNull();
    const bad = { ...canaryDoc({ "country/DE": { primary: "ams-1", fallbacks: [] } }), share: 90 };
    expect(toUiCanary(compile(snap({ ...stable, "canary/current": bad }), opts()))).toBeNull();
  });
});
