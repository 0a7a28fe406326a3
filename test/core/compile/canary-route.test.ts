import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  canaryRouteOf,
  compile,
  decodeSnapshot,
  onCanarySide,
  parseMap,
  parseMapShape,
  resolveRoute,
  serializeMap,
} from "../../../core/index.js";
import { canaryDoc } from "../../helpers/canary-doc.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const BR_NEW = { primary: "par-1", fallbacks: ["ams-1"] };

function withCanary(kv: Record<string, unknown>, changes: Record<string, unknown>, extra = {}) {
  return compile(snap({ ...kv, "canary/current": canaryDoc(changes, extra) }), opts());
}

const pools = (m: CompiledMap, cc: string) => canaryRouteOf(m, cc)?.chain.map((c) => c.pool);

describe("a running canary compiled into the map (docs/reference.md §13)", () => {
  it("carries the canary side of the one changed route; the stable routes are the stable intent's", () => {
    const kv = world({ "country/BR": { primary: "fra-1", fallbacks: [] } });
    const plain = compile(snap(kv), opts()).map;
    const { map, problems } = withCanary(kv, { "country/BR": BR_NEW });
    expect(problems).toEqual([]);
    expect(map.countries).toEqual(plain.countries);
    expect(map.default).toEqual(plain.default);
    expect(map.canary).toEqual({
      id: "c8",
      share: 10,
      countries: { BR: expect.objectContaining({ pool: "par-1", source: "country/BR" }) },
    });
    expect(canaryRouteOf(map, "DE")).toBeUndefined();
    expect(canaryRouteOf(map, "FR")).toBeUndefined();
  });

  it("a canary that adds a country's own rule lists it; countries routed by the default stay stable", () => {
    const { map } = withCanary(world(), { "country/BR": BR_NEW });
    expect(resolveRoute(map, "BR").source).toBe("country/_default");
    expect(pools(map, "BR")).toEqual(["par-1", "ams-1"]);
    expect(canaryRouteOf(map, "AR")).toBeUndefined();
  });

  it("a canary moving the default sends default-routed countries by it, but not a country the canary gives its own copy of the old route", () => {
    const { map } = withCanary(world(), {
      "country/_default": { primary: "fra-1", fallbacks: ["par-1"] },
      "country/BR": { primary: "ams-1", fallbacks: ["par-1"] },
    });
    expect(map.canary?.default?.pool).toBe("fra-1");
    expect(canaryRouteOf(map, "AR")?.pool).toBe("fra-1");
    // BR's canary rule routes like the stable default: still listed, so it does not take the canary default.
    expect(canaryRouteOf(map, "BR")?.pool).toBe("ams-1");
    expect(canaryRouteOf(map, "DE")).toBeUndefined();
  });

  it("no canary section when the change moves no route under current health", () => {
    const kv = world({
      "pool/lab-1": { origin: "https://lab-1.example.net" },
      "health/par-1": { status: "unhealthy" },
      "health/lab-1": { status: "unhealthy" },
      "country/BR": { primary: "fra-1", fallbacks: ["par-1"] },
    });
    // The new fallback is down too: BR's route is fra-1 alone on both sides.
    const { map } = withCanary(kv, { "country/BR": { primary: "fra-1", fallbacks: ["lab-1"] } });
    expect(resolveRoute(map, "BR").chain.map((c) => c.pool)).toEqual(["fra-1"]);
    expect(map.canary).toBeUndefined();
  });

  it("never drains a route on the canary side: an unhealthy new primary falls back along its chain", () => {
    const { map } = withCanary(world({ "health/par-1": { status: "unhealthy" } }), {
      "country/DE": { primary: "par-1", fallbacks: ["ams-1"] },
    });
    expect(canaryRouteOf(map, "DE")?.chain.map((c) => c.pool)).toEqual(["ams-1"]);
    const all = withCanary(
      world({
        "health/par-1": { status: "unhealthy" },
        "health/ams-1": { status: "unhealthy" },
      }),
      { "country/DE": { primary: "par-1", fallbacks: ["ams-1"] } },
    ).map;
    const side = canaryRouteOf(all, "DE");
    expect(side?.degraded).toBe("all-pools-unhealthy");
    expect(side?.pool).toBe("par-1");
  });

  it("a canary side keeps a fenced country inside its fence", () => {
    const kv = world({
      "pool/use-1": { origin: "https://use-1.example.net", region: "us-east" },
      "health/use-1": { status: "healthy" },
      "pool/fra-1": { origin: "https://fra-1.example.net", region: "eu-west" },
      "pool/par-1": { origin: "https://par-1.example.net", region: "eu-west" },
      "fence/eu": { countries: ["DE"], regions: ["eu-west"], floor: "par-1" },
    });
    const { map } = withCanary(kv, {
      "country/DE": { primary: "use-1", fallbacks: ["fra-1"] },
    });
    const side = canaryRouteOf(map, "DE");
    expect(side?.fence).toBe("eu");
    expect(side?.chain.map((c) => c.pool)).not.toContain("use-1");
  });

  it("a canary whose change does not decode is void: a problem on canary/current, no canary side", () => {
    const { map, problems } = withCanary(world(), { "country/BR": '{"primary":' });
    expect(map.canary).toBeUndefined();
    expect(problems.map((p) => [p.key, p.code])).toContainEqual([
      "canary/current",
      "invalid-value",
    ]);
  });

  it("an invalid canary/current value is a problem and no canary", () => {
    const state = decodeSnapshot(snap(world({ "canary/current": { id: "c8" } })), "/t/");
    expect(state.canary).toBeUndefined();
    expect(state.problems.map((p) => p.key)).toContain("canary/current");
  });

  it("the canary survives serialization, and the Worker's check and the pusher's agree on it", () => {
    const { map } = withCanary(world(), {
      "country/_default": { primary: "fra-1", fallbacks: [] },
      "country/BR": BR_NEW,
    });
    const text = serializeMap(map);
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    expect(parseMapShape(text)?.canary).toEqual(map.canary);
    expect(parseMap(text)?.canary).toEqual(map.canary);
    for (const bad of [
      { ...map.canary, id: "x;1" },
      { ...map.canary, share: 80 },
      { ...map.canary, countries: { BR: { pool: "a" } } },
    ]) {
      const damaged = JSON.stringify({ ...JSON.parse(text), canary: bad });
      expect(parseMapShape(damaged)?.canary).toBeUndefined();
      expect(parseMap(damaged)?.canary).toBeUndefined();
      expect(parseMapShape(damaged)?.countries).toEqual(parseMap(damaged)?.countries);
    }
  });

  it("picks about the share of viewers for the canary side, stickily, and each canary its own", () => {
    const viewers = Array.from({ length: 4000 }, (_, i) => `198.51.${i >> 8}.${i & 255}`);
    const a = viewers.filter((v) => onCanarySide({ id: "c8", share: 10 }, v));
    expect(a.length).toBeGreaterThan(320);
    expect(a.length).toBeLessThan(480);
    expect(viewers.filter((v) => onCanarySide({ id: "c8", share: 10 }, v))).toEqual(a);
    const b = viewers.filter((v) => onCanarySide({ id: "c9", share: 10 }, v));
    expect(b).not.toEqual(a);
    // A larger share only adds viewers: none of the 10 % leaves.
    const wider = new Set(viewers.filter((v) => onCanarySide({ id: "c8", share: 20 }, v)));
    expect(a.every((v) => wider.has(v))).toBe(true);
  });
});
