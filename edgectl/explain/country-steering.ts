import {
  type Route,
  type SteerFormat,
  type SteerSettings,
  splitPathwayOrders,
  steeringManifest,
  steeringUri,
} from "../../core/index.js";

/** The steering manifest one share of a country's viewers gets. */
export interface SteeringShare {
  /** The pool their sticky keys pick first (their playlist's pathway). */
  readonly pool: string;
  /** Its weight in the route's split; 100 for a route without one. */
  readonly weight: number;
  /** Exactly the JSON `/__edge/steer/{format}` answers them. */
  readonly manifest: Record<string, unknown>;
}

/** What `edgectl explain CC --steering FORMAT` shows. */
export interface CountrySteering {
  readonly country: string;
  readonly format: SteerFormat;
  /** One per share of the split; empty when the edge answers 503 (no pool inside the fence). */
  readonly shares: readonly SteeringShare[];
}

/**
 * The steering manifests a viewer of a country gets now (docs/reference.md §15), computed by
 * the Worker's own code (`splitPathwayOrders`, `steeringManifest`, `steeringUri`) from the
 * compiled route. An HLS viewer's request carries the playlist's pathway as its session's base
 * (the `SERVER-URI` the edge wrote); a DASH viewer's carries none. Outlier ejection lives in each
 * isolate and is not known here: the answer is the one of an isolate that ejected nothing.
 */
export function countrySteering(
  country: string,
  route: Route,
  format: SteerFormat,
  settings: Pick<SteerSettings, "ttlS" | "param">,
): CountrySteering {
  if (route.degraded === "fence-unsatisfiable") return { country, format, shares: [] };
  const shares = splitPathwayOrders(route).map((s) => {
    const base = format === "hls" ? (s.order[0] ?? null) : null;
    const manifest = steeringManifest(format, {
      ttlS: settings.ttlS,
      reloadUri: steeringUri(format, base),
      priority: s.order,
      base,
      param: settings.param,
    });
    return { pool: s.pool, weight: s.weight, manifest };
  });
  return { country, format, shares };
}
