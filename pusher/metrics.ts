import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { registerLiveHeapGauge } from "../adapters/live-heap.js";
import { VERSION } from "../adapters/version.js";
import { type CompileResult, type PoolReport, poolReportsOf } from "../core/index.js";
import { PoolGauge } from "./pool-gauge.js";
import type { PusherStatus } from "./status.js";

/** The pusher's Prometheus metrics, in their own registry (no global state). */
export interface PusherMetrics {
  readonly registry: Registry;
  readonly pushes: Counter;
  readonly pushErrors: Counter;
  readonly driftRepairs: Counter;
  readonly historyResets: Counter;
  /** Watches given up and started again, by reason: `disconnected`, `cancelled`, `silent`. */
  readonly watchRestarts: Counter<"reason">;
  readonly writeDuration: Histogram;
  /** One full (paged) read of the prefix; and the core compile of it. */
  readonly rangeReadDuration: Histogram;
  readonly compileDuration: Histogram;
  /** Reads of the prefix, delta or full (one per compile, however many pages it took). */
  readonly rangeReads: Counter;
  /** The reads among them that read every key, by why (`reason`). */
  readonly fullReads: Counter<"reason">;
  /** Range requests those reads made (pages, restarts included). */
  readonly rangePages: Counter;
  /** Records a compile: problems by code, routes on the floor pool, pools without heartbeat. */
  compiled(result: CompileResult): void;
}

/** What the metrics say about the configuration. */
export interface MetricsOptions {
  /** `HEARTBEAT_SECONDS`, exported so an alert can compare the last push's age with it. */
  readonly heartbeatSeconds?: number;
}

/** What the last compile said, kept for the scrape. */
interface CompileFacts {
  problemsByCode: ReadonlyMap<string, number>;
  floorRoutes: number;
  /** Its defined pools and live checkers, read at the scrape (whether a `health/` key exists). */
  state: Pick<CompileResult["state"], "pools" | "health">;
  /**
   * Every pool with a definition or a live checker: checkers, p90, shed (docs/reference.md §9);
   * made at the first scrape after the compile.
   */
  pools: () => readonly PoolReport[];
}

function factsOf(result: CompileResult): CompileFacts {
  const problemsByCode = new Map<string, number>();
  for (const p of result.problems)
    problemsByCode.set(p.code, (problemsByCode.get(p.code) ?? 0) + 1);
  const routes = [result.map.default, ...Object.values(result.map.countries)];
  return {
    problemsByCode,
    floorRoutes: routes.filter((r) => r.source === "floor").length,
    state: result.state,
    pools: () => poolReportsOf(result),
  };
}

/** Creates the registry with the process metrics; gauges read `status` when scraped. */
export function createMetrics(status: PusherStatus, opts: MetricsOptions = {}): PusherMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registerLiveHeapGauge(registry, "edge_pusher");
  let facts: CompileFacts | null = null;
  const gauge = (name: string, help: string, read: () => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const v = read();
        if (v !== null) this.set(v);
      },
    });
  new Gauge({
    name: "edge_pusher_build_info",
    help: "always 1; the label says which version runs",
    labelNames: ["version"],
    registers: [registry],
  }).set({ version: VERSION }, 1);
  gauge(
    "edge_pusher_heartbeat_seconds",
    "HEARTBEAT_SECONDS: the leader rewrites meta at least this often",
    () => opts.heartbeatSeconds ?? 60,
  );
  gauge(
    "edge_pusher_last_push_timestamp_seconds",
    "Unix time of this pusher's last successful KV write (routes or meta); 0 before the first",
    () => (status.lastPushAt === null ? 0 : status.lastPushAt / 1000),
  );
  gauge(
    "edge_pusher_pushed_revision",
    "etcd revision KV was last confirmed against (meta.rev: routes routes as that compile does)",
    () => status.pushedRevision,
  );
  gauge(
    "edge_pusher_etcd_revision",
    "newest etcd revision with routing state seen",
    () => status.etcdRevision,
  );
  gauge("edge_pusher_lag_seconds", "seconds since the oldest change not yet in KV", () =>
    status.lagSeconds(),
  );
  gauge("edge_pusher_lag_revisions", "etcd revision minus pushed revision", () =>
    status.lagRevisions(),
  );
  gauge(
    "edge_pusher_problems",
    "problems of the current map as /status lists them (the pushed map's on the leader)",
    () => status.problems.length,
  );
  new Gauge({
    name: "edge_pusher_problems_by_code",
    help: "problems of the last compile by code (invalid-json, dangling-reference, …)",
    labelNames: ["code"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [code, n] of facts?.problemsByCode ?? []) this.set({ code }, n);
    },
  });
  gauge(
    "edge_pusher_canary_running",
    "1 while a canary runs (canary/current, docs/reference.md §13), else 0",
    () => (status.canary() ? 1 : 0),
  );
  gauge(
    "edge_pusher_canary_frozen",
    "1 while the running canary has no fresh judgement (its observer is gone): it keeps its share and is never promoted",
    () => (status.canary()?.state === "frozen" ? 1 : 0),
  );
  gauge(
    "edge_pusher_canary_share_percent",
    "percent of each changed route's viewers on the running canary; 0 without one",
    () => status.canary()?.share ?? 0,
  );
  gauge(
    "edge_pusher_canary_age_seconds",
    "seconds since the running canary started; 0 without one",
    () => status.canary()?.age_s ?? 0,
  );
  gauge(
    "edge_pusher_canary_for_seconds",
    "the running canary's --for: how long its gates must hold before promotion; 0 without one",
    () => status.canary()?.for_s ?? 0,
  );
  new Gauge({
    name: "edge_pusher_canary_p90_ms",
    help: "the running canary's judged p90 time to first byte by side (canary, stable); absent without a judgement",
    labelNames: ["side"],
    registers: [registry],
    collect() {
      this.reset();
      const c = status.canary();
      if (c?.canary_side?.p90_ms != null) this.set({ side: "canary" }, c.canary_side.p90_ms);
      if (c?.stable_side?.p90_ms != null) this.set({ side: "stable" }, c.stable_side.p90_ms);
    },
  });
  new Gauge({
    name: "edge_pusher_canary_samples",
    help: "the running canary's judged requests by side (canary, stable) in the compared countries and minutes; absent without a judgement",
    labelNames: ["side"],
    registers: [registry],
    collect() {
      this.reset();
      const c = status.canary();
      if (c?.canary_side) this.set({ side: "canary" }, c.canary_side.samples);
      if (c?.stable_side) this.set({ side: "stable" }, c.stable_side.samples);
    },
  });
  new Gauge({
    name: "edge_pusher_canary_error_ratio",
    help: "the running canary's judged error ratio by side (canary, stable); absent without a judgement",
    labelNames: ["side"],
    registers: [registry],
    collect() {
      this.reset();
      const c = status.canary();
      if (c?.canary_side) this.set({ side: "canary" }, c.canary_side.error_ratio);
      if (c?.stable_side) this.set({ side: "stable" }, c.stable_side.error_ratio);
    },
  });
  gauge(
    "edge_pusher_floor_routes",
    "routes of the last compiled map (countries, and _default as one) sent to FLOOR_POOL because no pool of their rule is healthy or there is no default rule",
    () => facts?.floorRoutes ?? 0,
  );
  new PoolGauge({
    name: "edge_pusher_pool_heartbeat",
    help: "per defined pool: 1 while its health/ key exists (a heartbeat holds it), 0 when it is missing",
    registry,
    *read() {
      if (!facts) return;
      const { pools, health } = facts.state;
      for (const pool of pools.keys()) yield [pool, health.has(pool) ? 1 : 0];
    },
  });
  // Made afresh from the last compile at each scrape: a deleted pool's series goes with it.
  const perPool = (name: string, help: string, value: (r: PoolReport) => number | null) =>
    new PoolGauge({
      name,
      help,
      registry,
      *read() {
        for (const r of facts?.pools() ?? []) {
          const v = value(r);
          if (v !== null) yield [r.pool, v];
        }
      },
    });
  perPool(
    "edge_pusher_pool_p90_ms",
    "per pool: the median of its healthy checkers' p90 time to first byte, in ms (absent when none publishes one)",
    (r) => r.p90_ms,
  );
  perPool(
    "edge_pusher_pool_shed_ratio",
    "per pool: the share of its viewers it sheds to the next pools of each chain, 0–1 (slow_ms)",
    (r) => r.shed / 100,
  );
  perPool(
    "edge_pusher_pool_slow_high_ms",
    "per pool: its slow_ms.high watermark in ms (absent without slow_ms)",
    (r) => r.slow_ms?.high ?? null,
  );
  perPool(
    "edge_pusher_pool_healthy",
    "per pool: 1 when its checkers judge it healthy, 0 otherwise",
    (r) => (r.status === "healthy" ? 1 : 0),
  );
  perPool(
    "edge_pusher_pool_live_checkers",
    "per pool: checkers whose health/ key is present and valid",
    (r) => r.live_checkers,
  );
  gauge(
    "edge_pusher_history",
    "etcd history compiled in (raised by a restore)",
    () => status.history,
  );
  gauge("edge_pusher_is_leader", "1 when this pusher is the elected writer", () =>
    status.role === "leader" ? 1 : 0,
  );
  return {
    registry,
    compiled(result) {
      facts = factsOf(result);
    },
    pushes: new Counter({
      name: "edge_pusher_pushes_total",
      help: "successful KV writes of routes and/or meta",
      registers: [registry],
    }),
    pushErrors: new Counter({
      name: "edge_pusher_push_errors_total",
      help: "failed KV requests of the leader's pushes (each is retried): writes, and the reads of routes a push starts from or is checked against",
      registers: [registry],
    }),
    driftRepairs: new Counter({
      name: "edge_pusher_drift_repairs_total",
      help: "reconciles that found KV different from etcd and rewrote it",
      registers: [registry],
    }),
    historyResets: new Counter({
      name: "edge_pusher_kv_history_resets_total",
      help: "times the pusher followed a new etcd history (etcd restored or replaced: revision went back, cluster id changed, or KV held a revision above etcd's) and rewrote KV",
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: "edge_pusher_watch_restarts_total",
      help: "watches re-listed and started again: disconnected, cancelled by etcd, or silent while the prefix moved (replaced on a new connection)",
      labelNames: ["reason"],
      registers: [registry],
    }),
    rangeReads: new Counter({
      name: "edge_pusher_range_reads_total",
      help: "reads of the routing prefix, at one revision (each feeds one compile; at most one per KV write slot under load)",
      registers: [registry],
    }),
    fullReads: new Counter({
      name: "edge_pusher_full_reads_total",
      help: "reads that read every key of the prefix instead of only the keys modified since the last read, by reason",
      labelNames: ["reason"],
      registers: [registry],
    }),
    rangePages: new Counter({
      name: "edge_pusher_range_pages_total",
      help: "range requests (pages) made by those reads, each pinned to the read's first revision",
      registers: [registry],
    }),
    writeDuration: new Histogram({
      name: "edge_pusher_write_duration_seconds",
      help: "duration of KV writes",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    rangeReadDuration: new Histogram({
      name: "edge_pusher_range_read_seconds",
      help: "duration of one full read of the routing prefix (all its pages)",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    compileDuration: new Histogram({
      name: "edge_pusher_compile_seconds",
      help: "duration of the core compile of one read",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}
