import type { ChainLink, KeptRule, Route } from "../contract/compiled-map.js";
import { countriesOf } from "../contract/continents.js";
import type { Fence } from "../contract/fence.js";
import { FenceSchema } from "../intent/fence-schema.js";
import { type Problem, problem } from "../intent/problem.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { PoolDef } from "../intent/schema.js";
import type { CarriedState } from "./carried-state.js";

/** A covered country's fence: its name (the `fence/{name}` key's) and its value. */
export interface FenceOf {
  readonly name: string;
  readonly fence: Fence;
}

/** Which fence covers each country, and the overlaps that were settled. */
export interface FenceCover {
  readonly byCountry: ReadonlyMap<string, FenceOf>;
  readonly problems: readonly Problem[];
}

/** The countries a fence covers: those it lists plus every country of its continents, sorted. */
export function fenceCountries(fence: Fence): string[] {
  const out = new Set<string>(fence.countries);
  for (const k of fence.continents) for (const cc of countriesOf(k)) out.add(cc);
  return [...out].sort();
}

/**
 * The fence of every covered country (docs/reference.md §10). A country belongs to at most one
 * fence: when two cover it, the first name in sort order keeps it, and a problem on the other
 * names both.
 */
export function fenceCover(fences: ReadonlyMap<string, Fence>): FenceCover {
  const byCountry = new Map<string, FenceOf>();
  const problems: Problem[] = [];
  for (const name of [...fences.keys()].sort()) {
    const fence = fences.get(name);
    if (!fence) continue;
    const lost: string[] = [];
    let owner = "";
    for (const cc of fenceCountries(fence)) {
      const held = byCountry.get(cc);
      if (held) {
        lost.push(cc);
        owner = held.name;
      } else byCountry.set(cc, { name, fence });
    }
    if (lost.length > 0) {
      const shown =
        lost.slice(0, 5).join(", ") + (lost.length > 5 ? ` and ${lost.length - 5} more` : "");
      problems.push(
        problem(
          `fence/${name}`,
          "fence-overlap",
          `overlaps fence ${owner} on ${shown}: a country belongs to one fence; fence ${owner} (first in sort order) keeps ${lost.length === 1 ? "it" : "them"}`,
        ),
      );
    }
  }
  return { byCountry, problems };
}

/**
 * The fences in force: every valid `fence/` value, plus, for a key whose value is invalid now,
 * the last valid value the previous map carries (a damaged value never lifts a fence). Sorted.
 */
export function fencesInForce(
  state: Pick<RoutingState, "fences" | "invalidFences">,
  previous: CarriedState | null,
): Map<string, Fence> {
  const out = new Map(state.fences);
  const last = previous?.fences;
  for (const name of state.invalidFences) {
    if (!last || !Object.hasOwn(last, name)) continue;
    const r = FenceSchema.safeParse(last[name]);
    if (r.success) out.set(name, r.data);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** True when `pool` is defined and its `region` is one of the fence's (no region: outside). */
export function poolInFence(
  pool: string,
  fence: Fence,
  pools: ReadonlyMap<string, PoolDef>,
): boolean {
  const region = pools.get(pool)?.region;
  return region !== undefined && fence.regions.includes(region);
}

/** The first pool of `rule` (primary, then fallbacks) outside `fence`; `undefined` when none. */
export function poolOutsideFence(
  rule: Pick<KeptRule, "primary" | "fallbacks">,
  fence: Fence,
  pools: ReadonlyMap<string, PoolDef>,
): string | undefined {
  return [rule.primary, ...rule.fallbacks].find((p) => !poolInFence(p, fence, pools));
}

/**
 * The one check behind the pusher's problem and the CLI's refusal (docs/reference.md §10): the
 * problem, on the rule's key, when `rule` would send `cc` outside its fence; `null` otherwise.
 */
export function fenceCrossing(
  ruleKey: string,
  rule: Pick<KeptRule, "primary" | "fallbacks">,
  cc: string,
  fenced: FenceOf,
  pools: ReadonlyMap<string, PoolDef>,
): Problem | null {
  const pool = poolOutsideFence(rule, fenced.fence, pools);
  if (pool === undefined) return null;
  return problem(
    ruleKey,
    "fence-crossing",
    `would send ${cc} to pool ${pool}, outside fence ${fenced.name} (regions ${fenced.fence.regions.join(", ")}); ignored for ${cc}`,
  );
}

/**
 * Problems of the fences themselves: a floor outside its fence, and a `FLOOR_POOL` (where the
 * Worker goes with no map at all) outside any fence.
 */
export function fenceProblems(
  fences: ReadonlyMap<string, Fence>,
  state: Pick<RoutingState, "pools">,
  floorPool: string,
): Problem[] {
  const out: Problem[] = [];
  for (const [name, fence] of fences) {
    if (!poolInFence(fence.floor, fence, state.pools)) {
      const why = state.pools.has(fence.floor) ? "outside the fence" : "not a defined pool";
      out.push(
        problem(
          `fence/${name}`,
          "fence-floor",
          `floor ${fence.floor} is ${why}; its countries fall to the first in-fence pool instead`,
        ),
      );
    }
    if (!poolInFence(floorPool, fence, state.pools)) {
      out.push(
        problem(
          `fence/${name}`,
          "fence-floor",
          `FLOOR_POOL ${floorPool} is outside the fence: a Worker with no map would serve its countries there`,
        ),
      );
    }
  }
  return out;
}

/**
 * The route of a fenced country when none of its pools is left: the fence's `floor` when it lies
 * inside the fence (whatever its health, as `FLOOR_POOL` is), else the first healthy in-fence
 * pool by name, else the first in-fence pool by name, all `degraded: "all-pools-unhealthy"`.
 * With no pool inside the fence at all, the route is `degraded: "fence-unsatisfiable"`: the
 * Worker answers 503 rather than serve outside the fence.
 */
export function fenceFloorRoute(
  fenced: FenceOf,
  state: Pick<RoutingState, "pools" | "health">,
  originOf: (pool: string) => string,
): Route {
  const { fence, name } = fenced;
  const inside = [...state.pools.keys()].filter((p) => poolInFence(p, fence, state.pools)).sort();
  const healthy = inside.find((p) => state.health.get(p)?.status === "healthy");
  const floor = poolInFence(fence.floor, fence, state.pools) ? fence.floor : (healthy ?? inside[0]);
  const pool = floor ?? fence.floor;
  const origin = originOf(pool);
  return {
    pool,
    origin,
    chain: [{ pool, origin }],
    source: "floor",
    degraded: floor === undefined ? "fence-unsatisfiable" : "all-pools-unhealthy",
    fence: name,
  };
}

/**
 * Constrains a fenced country's route to its fence (docs/reference.md §10), whatever decided it:
 * pools outside the fence leave the chain and the weights; a route left with nothing, or one
 * that is the global floor, becomes the fence's floor ({@link fenceFloorRoute}). The result
 * carries `fence`. Applied last, so it holds whatever rule, health or weighting came before.
 */
export function fenceRoute(
  route: Route,
  fenced: FenceOf,
  state: Pick<RoutingState, "pools" | "health">,
  originOf: (pool: string) => string,
): Route {
  const inside = (p: string) => poolInFence(p, fenced.fence, state.pools);
  const chain: ChainLink[] = route.chain.filter((c) => inside(c.pool));
  const first = chain[0];
  if (route.source === "floor" || !first) {
    const floor = fenceFloorRoute(fenced, state, originOf);
    return route.attrs ? { ...floor, attrs: route.attrs } : floor;
  }
  const weights = route.weights?.filter((w) => inside(w.pool));
  const shed = route.shed?.filter((s) => inside(s.pool));
  const { weights: _weights, shed: _shed, ...rest } = route;
  const base: Route = {
    ...rest,
    pool: first.pool,
    origin: first.origin,
    chain,
    fence: fenced.name,
  };
  const weighted = weights && weights.length > 0 ? { ...base, weights } : base;
  return shed && shed.length > 0 ? { ...weighted, shed } : weighted;
}
