import type { CompiledMap } from "../contract/compiled-map.js";
import type { RouteSettings } from "../contract/route-settings.js";
import type { RouteMemo } from "../incremental/route-memo.js";
import type { Problem } from "../intent/problem.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { CarriedState } from "./carried-state.js";

/** Settings shared by the pusher, the CLI and the Worker. */
export interface CompileOptions extends RouteSettings {
  readonly prefix: string;
  readonly now: Date;
  /**
   * What this compile carries forward from an earlier one (see {@link CarriedState}), built by
   * `carriedState` from the process's own last compile and/or KV's map; `null` carries nothing.
   */
  readonly carried: CarriedState | null;
  /** The etcd history the snapshot belongs to (`CompiledMap.history`); 0 by default. */
  readonly history?: number;
  /** Byte budget of the `routes` document; junk problems are summarised to fit. 1 MiB by default. */
  readonly routesBudgetBytes?: number;
  /** How long a shed share holds before it falls one step (`SHED_RECOVER_SECONDS`); 60 by default. */
  readonly shedRecoverSeconds?: number;
  /**
   * Routes kept from the previous compile of the same `RoutingIndex` (the pusher's): rules
   * whose key did not change are not routed again. The map is the same without it.
   */
  readonly routeMemo?: RouteMemo;
}

/** The compiled map plus the structured problems behind its `problems` strings. */
export interface CompileResult {
  readonly map: CompiledMap;
  readonly problems: readonly Problem[];
  readonly state: RoutingState;
  /**
   * When (ms since the epoch) a shed share may next step down with no etcd change: the pusher
   * compiles again then. `null` when no share is falling.
   */
  readonly nextShedStepAt: number | null;
}
