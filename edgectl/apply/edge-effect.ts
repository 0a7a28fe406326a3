import {
  type CompileOptions,
  compile,
  DEFAULT_CC,
  describeSlowPool,
  formatShed,
  type PoolReport,
  poolReports,
  type Route,
  resolveRoute,
  type Snapshot,
} from "../../core/index.js";
import { formatShares, routeShares, sharesDiffer } from "../explain/route-shares.js";
import type { KeyChange } from "./plan-diff.js";

/** A country whose route changes pool (or origin) if the changes were applied now. */
export interface RouteShift {
  readonly country: string;
  readonly before: Route;
  readonly after: Route;
}

/** The snapshot as it would be after the changes (current keys with intent keys replaced). */
export function applyChangesToSnapshot(
  snapshot: Snapshot,
  changes: readonly KeyChange[],
): Snapshot {
  const entries = new Map(snapshot.entries.map((e) => [e.key, e.value] as const));
  for (const c of changes) {
    if (c.kind === "remove") entries.delete(c.key);
    else if (c.after !== undefined) entries.set(c.key, c.after);
  }
  return {
    revision: snapshot.revision,
    entries: [...entries].map(([key, value]) => ({ key, value })),
  };
}

/**
 * Compiles the current and the proposed snapshot under current health and lists every country
 * (and `_default`, which stands for every country without its own route) whose pool or origin moves.
 */
export function edgeEffect(
  snapshot: Snapshot,
  changes: readonly KeyChange[],
  opts: CompileOptions,
): RouteShift[] {
  const before = compile(snapshot, opts).map;
  const after = compile(applyChangesToSnapshot(snapshot, changes), opts).map;
  const ccs = new Set([...Object.keys(before.countries), ...Object.keys(after.countries)]);
  const shifts: RouteShift[] = [];
  const moved = (a: Route, b: Route) =>
    a.pool !== b.pool || a.origin !== b.origin || sharesDiffer(a, b);
  if (moved(before.default, after.default))
    shifts.push({ country: DEFAULT_CC, before: before.default, after: after.default });
  for (const cc of [...ccs].sort()) {
    const b = resolveRoute(before, cc);
    const a = resolveRoute(after, cc);
    if (moved(b, a)) shifts.push({ country: cc, before: b, after: a });
  }
  return shifts;
}

/**
 * The pools that would shed viewers after the changes, under current health and latency (a
 * fresh compile: the pusher then lets a falling share down one step per recover period).
 */
export function sheddingAfter(
  snapshot: Snapshot,
  changes: readonly KeyChange[],
  opts: CompileOptions,
): PoolReport[] {
  const { map, state } = compile(applyChangesToSnapshot(snapshot, changes), opts);
  return poolReports(state, map).filter((r) => r.shed > 0);
}

/** `Slow pools …` lines for `plan` and `apply`; none when no pool sheds. */
export function formatShedding(reports: readonly PoolReport[]): string[] {
  if (reports.length === 0) return [];
  return [
    "Slow pools under current latency:",
    ...reports.map((r) => `  ${r.pool}: ${describeSlowPool(r)}`),
  ];
}

/** A shift in shares of viewers, for routes with a weighted split on either side. */
function describeShares(s: RouteShift): string {
  const src = (r: Route) =>
    [r.source, r.degraded, r.shed ? `shed ${formatShed(r.shed)}` : null]
      .filter((x) => x !== null)
      .join(", ");
  const sources =
    s.before.source === s.after.source ? src(s.after) : `${src(s.before)} → ${src(s.after)}`;
  return `${formatShares(s.before)} → ${formatShares(s.after)} (${sources})`;
}

/** A route as `-o json` shows it in the edge effect: where it sends viewers, in shares. */
export function routeSummary(r: Route) {
  return {
    pool: r.pool,
    origin: r.origin,
    source: r.source,
    degraded:
      r.degraded === "all-pools-unhealthy" ||
      r.degraded === "all-pools-slow" ||
      r.degraded === "no-default-rule"
        ? r.degraded
        : null,
    shares: routeShares(r),
    ...(r.shed
      ? {
          shed: r.shed.map((x) =>
            x.by ? { pool: x.pool, share: x.share, by: x.by } : { pool: x.pool, share: x.share },
          ),
        }
      : {}),
  };
}

/** A shift as `-o json` shows it (`RouteShiftShape`): both sides in shares of viewers. */
export function shiftDocument(s: RouteShift) {
  return { country: s.country, before: routeSummary(s.before), after: routeSummary(s.after) };
}

function describe(r: Route): string {
  return r.degraded ? `${r.pool} (${r.source}, ${r.degraded})` : `${r.pool} (${r.source})`;
}

/** Renders the edge effect for `plan` and `apply`. */
export function formatEdgeEffect(shifts: readonly RouteShift[]): string[] {
  if (shifts.length === 0) return ["Edge effect under current health: no country changes pool."];
  return [
    `Edge effect under current health: ${shifts.length} route${shifts.length === 1 ? "" : "s"} change pool`,
    ...shifts.map((s) => {
      const who =
        s.country === DEFAULT_CC ? "_default (countries without their own rule)" : s.country;
      if (s.before.weights || s.after.weights) return `  ${who}: ${describeShares(s)}`;
      return `  ${who}: ${describe(s.before)} → ${describe(s.after)}`;
    }),
  ];
}
