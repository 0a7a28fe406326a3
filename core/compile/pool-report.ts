import type { CompiledMap } from "../contract/compiled-map.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { HealthStatus, SlowMs } from "../intent/schema.js";

interface CompileResultLike {
  readonly state: Pick<RoutingState, "pools" | "health">;
  readonly map: Pick<CompiledMap, "sheds">;
}

/** One pool's health, latency and shed, as `/status`, metrics, `/ui` and edgectl show it. */
export interface PoolReport {
  readonly pool: string;
  /** As its checkers judge it; `missing` when no checker is live. */
  readonly status: HealthStatus | "missing";
  /** The median of its healthy checkers' p90; null when none publishes one. */
  readonly p90_ms: number | null;
  readonly live_checkers: number;
  readonly healthy_checkers: number;
  /** Healthy checkers needed; null when no checker is live. */
  readonly quorum: number | null;
  readonly slow_ms: SlowMs | null;
  /** Percent of its viewers the pool sheds (0–100), as the map says. */
  readonly shed: number;
}

/**
 * A report per pool that has a `pool/` definition or a live checker, sorted by name; the shed
 * comes from the map's `sheds` (docs/reference.md §9).
 */
export function poolReports(
  state: Pick<RoutingState, "pools" | "health">,
  map: Pick<CompiledMap, "sheds"> | null,
): PoolReport[] {
  const names = [...new Set([...state.pools.keys(), ...state.health.keys()])].sort();
  return names.map((pool) => poolReport(pool, state, map));
}

const reportsByResult = new WeakMap<object, readonly PoolReport[]>();

/**
 * {@link poolReports} of one compile, made once however many readers ask (`/status` and
 * `/metrics` share one list: at 50,000 pools each list is ~5 MiB of heap).
 */
export function poolReportsOf(
  result: Pick<CompileResultLike, "state" | "map">,
): readonly PoolReport[] {
  let reports = reportsByResult.get(result);
  if (!reports) {
    reports = poolReports(result.state, result.map);
    reportsByResult.set(result, reports);
  }
  return reports;
}

/** One pool's report (`missing`, with no figures, for a pool nothing knows). */
export function poolReport(
  pool: string,
  state: Pick<RoutingState, "pools" | "health">,
  map: Pick<CompiledMap, "sheds"> | null,
): PoolReport {
  const h = state.health.get(pool);
  const sheds = map?.sheds;
  const shed = sheds && Object.hasOwn(sheds, pool) ? (sheds[pool]?.share ?? 0) : 0;
  return {
    pool,
    status: h?.status ?? "missing",
    p90_ms: h?.p90_ms ?? null,
    live_checkers: h?.live ?? 0,
    healthy_checkers: h?.healthyCheckers ?? 0,
    quorum: h?.quorum ?? null,
    slow_ms: state.pools.get(pool)?.slow_ms ?? null,
    shed,
  };
}

/** `p90 1400 ms, watermarks 800/2000 ms, sheds 50 %`: a slow pool in one phrase. */
export function describeSlowPool(r: PoolReport): string {
  const p90 = r.p90_ms === null ? "no p90" : `p90 ${r.p90_ms} ms`;
  const marks = r.slow_ms ? `, watermarks ${r.slow_ms.low}/${r.slow_ms.high} ms` : "";
  return `${p90}${marks}, sheds ${r.shed} %`;
}
