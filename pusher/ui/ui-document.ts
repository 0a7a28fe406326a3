import { type CompileResult, poolReports, type Route } from "../../core/index.js";
import type { ObservedPair } from "../observed-map.js";
import type { StatusDocument } from "../status.js";
import { toUiCanary, type UiCanary } from "./ui-canary.js";
import { toUiPathways, type UiPathwayGroup } from "./ui-pathways.js";

/** A pool's health as the legend shows it: `missing` means no `health/` key (lease expired). */
export type UiPoolHealth = "healthy" | "draining" | "unhealthy" | "missing";

/** One weighted pool of a route (docs/reference.md §3.5). */
export interface UiWeight {
  readonly pool: string;
  readonly weight: number;
}

/** A compiled route without origins: the page never sees an origin URL (nor does `/status`). */
export interface UiRoute {
  readonly pool: string;
  /** The healthy pools in failover order; the first is `pool`. */
  readonly chain: readonly string[];
  readonly source: string;
  readonly degraded: string | null;
  readonly weights?: readonly UiWeight[];
  /** The route's pools that shed viewers, and their shares (docs/reference.md §9). */
  readonly shed?: readonly { readonly pool: string; readonly share: number }[];
  /** The fence that holds the country (docs/reference.md §10); absent when none. */
  readonly fence?: string;
}

/** A fence as the legend lists it (docs/reference.md §10). */
export interface UiFence {
  readonly name: string;
  readonly regions: readonly string[];
  readonly floor: string;
  /** How many countries of the map it holds. */
  readonly countries: number;
}

/** A pool the legend lists: defined, named by a rule, publishing health, or the floor. */
export interface UiPool {
  readonly name: string;
  readonly health: UiPoolHealth;
  /** Whether a `pool/` definition exists (a rule naming an undefined pool is a problem). */
  readonly defined: boolean;
  readonly region?: string;
  readonly p90_ms?: number;
  /** Percent of its viewers a slow pool sheds; absent when it sheds none. */
  readonly shed?: number;
  /** Its p90 watermarks (`slow_ms`), when it has them. */
  readonly slow_ms?: { readonly low: number; readonly high: number };
  /** Live checkers and how many say healthy, when more than one checker reports. */
  readonly checkers?: { readonly live: number; readonly healthy: number };
}

/** Where one country's viewers go: a pool, with what they get there (`observed/{CC}/{pool}`). */
export interface UiViewers {
  readonly country: string;
  readonly pool: string;
  /** The requests behind the figures, over the observer's window. */
  readonly requests: number;
  readonly p90_ms: number;
  readonly error_ratio: number;
  /** Share of the requests the edge cache answered (§14); absent when the edge counted none. */
  readonly hit_ratio?: number;
}

/** Most viewer flows the page gets, busiest first: a line each, readable at a glance. */
export const MAX_UI_VIEWERS = 200;

/** The last compiled map in the form `/ui/data` and the `map` event carry. */
export interface UiMap {
  readonly rev: number;
  readonly epoch: number;
  readonly history: number;
  readonly compiled_at: string;
  readonly floor_pool: string;
  readonly default: UiRoute;
  readonly countries: Readonly<Record<string, UiRoute>>;
  readonly pools: readonly UiPool[];
  readonly fences: readonly UiFence[];
  readonly problems: readonly string[];
  /** Where viewers go, busiest first (at most `MAX_UI_VIEWERS`); empty without an observer. */
  readonly viewers: readonly UiViewers[];
  /** The running canary's routes, both sides (docs/reference.md §13); null when none runs. */
  readonly canary: UiCanary | null;
  /** Each route's steering pathway orders, countries with the same grouped (§15). */
  readonly pathways: readonly UiPathwayGroup[];
}

/** `GET /ui/data`: the pusher's `/status` document beside its last compiled map. */
export interface UiData {
  readonly status: StatusDocument;
  /** Null until the pusher has compiled once. */
  readonly map: UiMap | null;
}

function weightsOf(route: Route): readonly UiWeight[] | undefined {
  // Weighted routes (docs/reference.md §3.5) carry `weights`; older maps do not.
  const raw: unknown = (route as { readonly weights?: unknown }).weights;
  if (!Array.isArray(raw)) return undefined;
  const out: UiWeight[] = [];
  for (const w of raw as unknown[]) {
    if (typeof w !== "object" || w === null) continue;
    const { pool, weight } = w as { pool?: unknown; weight?: unknown };
    if (typeof pool === "string" && typeof weight === "number") out.push({ pool, weight });
  }
  return out.length ? out : undefined;
}

function uiRoute(route: Route): UiRoute {
  const weights = weightsOf(route);
  return {
    pool: route.pool,
    chain: route.chain.map((c) => c.pool),
    source: route.source,
    degraded: route.degraded,
    ...(weights ? { weights } : {}),
    ...(route.shed ? { shed: route.shed.map((s) => ({ pool: s.pool, share: s.share })) } : {}),
    ...(route.fence !== undefined ? { fence: route.fence } : {}),
  };
}

/** Every pool a rule names (valid rules only: invalid ones are problems, not pools). */
function namedPools(result: CompileResult): Set<string> {
  const names = new Set<string>();
  const { state } = result;
  for (const rule of [...state.countries.values(), ...state.overrides.values()]) {
    names.add(rule.primary);
    for (const f of rule.fallbacks) names.add(f);
  }
  return names;
}

/** Builds the page's view of one compile: routes without origins, pools with their health. */
export function toUiMap(
  result: CompileResult,
  floorPool: string,
  observed: Iterable<ObservedPair> = [],
): UiMap {
  const { map, state } = result;
  const countries: Record<string, UiRoute> = {};
  for (const [cc, route] of Object.entries(map.countries)) countries[cc] = uiRoute(route);
  const names = new Set<string>([...state.pools.keys(), ...state.health.keys(), floorPool]);
  for (const n of namedPools(result)) names.add(n);
  const reports = new Map(poolReports(state, map).map((r) => [r.pool, r]));
  const pools: UiPool[] = [...names].sort().map((name) => {
    const def = state.pools.get(name);
    const health = state.health.get(name);
    const r = reports.get(name);
    return {
      name,
      health: health?.status ?? "missing",
      defined: def !== undefined,
      ...(def?.region !== undefined ? { region: def.region } : {}),
      ...(health?.p90_ms !== undefined ? { p90_ms: health.p90_ms } : {}),
      ...(r && r.shed > 0 ? { shed: r.shed } : {}),
      ...(def?.slow_ms ? { slow_ms: { low: def.slow_ms.low, high: def.slow_ms.high } } : {}),
      ...(health && health.live > 1
        ? { checkers: { live: health.live, healthy: health.healthyCheckers } }
        : {}),
    };
  });
  const held = new Map<string, number>();
  for (const route of Object.values(map.countries))
    if (route.fence !== undefined) held.set(route.fence, (held.get(route.fence) ?? 0) + 1);
  const fences: UiFence[] = Object.entries(map.fences ?? {}).map(([name, f]) => ({
    name,
    regions: [...f.regions],
    floor: f.floor,
    countries: held.get(name) ?? 0,
  }));
  return {
    rev: map.rev,
    epoch: map.epoch,
    history: map.history,
    compiled_at: map.compiled_at,
    floor_pool: floorPool,
    default: uiRoute(map.default),
    countries,
    pools,
    fences,
    problems: map.problems,
    viewers: viewersOf(observed),
    canary: toUiCanary(result),
    pathways: toUiPathways(map),
  };
}

/** The busiest viewer flows, by requests then country and pool. */
function viewersOf(observed: Iterable<ObservedPair>): UiViewers[] {
  const all: UiViewers[] = [];
  for (const o of observed)
    all.push({
      country: o.country,
      pool: o.pool,
      requests: o.samples,
      p90_ms: o.p90_ms,
      error_ratio: o.error_ratio,
      ...(o.hit_ratio !== undefined ? { hit_ratio: o.hit_ratio } : {}),
    });
  all.sort(
    (a, b) =>
      b.requests - a.requests ||
      (a.country < b.country ? -1 : a.country > b.country ? 1 : a.pool < b.pool ? -1 : 1),
  );
  return all.slice(0, MAX_UI_VIEWERS);
}
