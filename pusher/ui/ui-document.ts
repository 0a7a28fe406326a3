import { type CompileResult, poolReports, type Route } from "../../core/index.js";
import type { StatusDocument } from "../status.js";

/** A pool's health as the legend shows it: `missing` means no `health/` key (lease expired). */
export type UiPoolHealth = "healthy" | "draining" | "unhealthy" | "missing";

/** One weighted pool of a route (SPEC §3.5). */
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
  readonly problems: readonly string[];
}

/** `GET /ui/data`: the pusher's `/status` document beside its last compiled map. */
export interface UiData {
  readonly status: StatusDocument;
  /** Null until the pusher has compiled once. */
  readonly map: UiMap | null;
}

function weightsOf(route: Route): readonly UiWeight[] | undefined {
  // Weighted routes (SPEC §3.5) carry `weights`; older maps do not.
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
export function toUiMap(result: CompileResult, floorPool: string): UiMap {
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
  return {
    rev: map.rev,
    epoch: map.epoch,
    history: map.history,
    compiled_at: map.compiled_at,
    floor_pool: floorPool,
    default: uiRoute(map.default),
    countries,
    pools,
    problems: map.problems,
  };
}
