import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { registerLiveHeapGauge } from "../adapters/live-heap.js";
import { VERSION } from "../adapters/version.js";
import type { CounterIncrement } from "./minute-ledger.js";
import { pairKey } from "./minute-reading.js";
import { OBSERVE_FAILURE_CODES, type ObserveFailureCode } from "./observe-failure.js";
import { TtfbHistogram } from "./ttfb-histogram.js";

/** The counters' totals, as the state file keeps them. */
export interface CounterTotals {
  readonly requests: readonly { country: string; pool: string; outcome: string; n: number }[];
  readonly starved: readonly { country: string; pool: string; n: number }[];
  readonly failovers: readonly { country: string; pool: string; n: number }[];
  /** Absent in a state file written before the edge counted cache results. */
  readonly cache?: readonly { country: string; pool: string; result: string; n: number }[];
  readonly ttfb: readonly { country: string; pool: string; buckets: number[]; sum: number }[];
}

/**
 * `edgectl observe`'s Prometheus metrics, in their own registry: what viewers got
 * (`edge_viewer_*`, counters that only grow) and the observer's own health (`edge_observer_*`),
 * plus the process metrics.
 */
export class ObserverMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"country" | "pool" | "outcome">;
  private readonly starved: Counter<"country" | "pool">;
  private readonly failovers: Counter<"country" | "pool">;
  private readonly cache: Counter<"country" | "pool" | "result">;
  private readonly ttfb: TtfbHistogram;
  private readonly polls: Counter<"result">;
  private readonly edgeUp: Gauge;
  private readonly lastSuccess: Gauge;
  private readonly resets: Counter;
  private readonly writes: Counter<"op">;
  private readonly keys: Gauge;
  private readonly registered: Gauge;
  private readonly totals = {
    requests: new Map<string, { country: string; pool: string; outcome: string; n: number }>(),
    starved: new Map<string, { country: string; pool: string; n: number }>(),
    failovers: new Map<string, { country: string; pool: string; n: number }>(),
    cache: new Map<string, { country: string; pool: string; result: string; n: number }>(),
  };

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    registerLiveHeapGauge(this.registry, "edge_observer");
    new Gauge({
      name: "edge_observer_build_info",
      help: "always 1; the label says which version runs",
      labelNames: ["version"],
      registers,
    }).set({ version: VERSION }, 1);
    this.requests = new Counter({
      name: "edge_viewer_requests_total",
      help: "viewers' requests the edge recorded, by country, the pool that answered and outcome (ok, client_error, origin_error, timeout, unreachable, edge_error)",
      labelNames: ["country", "pool", "outcome"],
      registers,
    });
    this.ttfb = new TtfbHistogram(this.registry);
    this.starved = new Counter({
      name: "edge_viewer_starved_total",
      help: "requests whose player reported buffer starvation (CMCD bs), by country and pool",
      labelNames: ["country", "pool"],
      registers,
    });
    this.failovers = new Counter({
      name: "edge_viewer_failovers_total",
      help: "requests answered by a pool after another one of the chain failed, by country and the pool that answered",
      labelNames: ["country", "pool"],
      registers,
    });
    this.cache = new Counter({
      name: "edge_viewer_cache_total",
      help: "viewers' requests by where the edge answered them from (X-Edge-Cache: hit, miss, bypass, stale), by country and the pool of the route",
      labelNames: ["country", "pool", "result"],
      registers,
    });
    this.polls = new Counter({
      name: "edge_observer_polls_total",
      help: "polls of the edge's /__edge/observations by result: ok, or the reason it failed (edge-unreachable, unauthorized, edge-status, junk-response)",
      labelNames: ["result"],
      registers,
    });
    this.edgeUp = new Gauge({
      name: "edge_observer_edge_up",
      help: "1 when the last poll of the edge succeeded, else 0",
      registers,
    });
    this.lastSuccess = new Gauge({
      name: "edge_observer_last_success_timestamp_seconds",
      help: "Unix time of the last successful poll; 0 before the first",
      registers,
    });
    this.resets = new Counter({
      name: "edge_observer_edge_resets_total",
      help: "(country, pool) pairs whose current minute held fewer requests than already counted: the edge's aggregator restarted",
      registers,
    });
    this.writes = new Counter({
      name: "edge_observer_etcd_writes_total",
      help: "writes of observed/ keys: put (a new pair, or a p90 or error ratio that moved) and delete (a pair below --min-samples)",
      labelNames: ["op"],
      registers,
    });
    this.keys = new Gauge({
      name: "edge_observer_observed_keys",
      help: "observed/ keys the observer holds under its lease",
      registers,
    });
    this.registered = new Gauge({
      name: "edge_observer_registered",
      help: "1 while the observer holds a live lease for its observed/ keys",
      registers,
    });
    this.polls.inc({ result: "ok" }, 0);
    for (const code of OBSERVE_FAILURE_CODES) this.polls.inc({ result: code }, 0);
    this.edgeUp.set(0);
    this.lastSuccess.set(0);
    this.resets.inc(0);
    this.writes.inc({ op: "put" }, 0);
    this.writes.inc({ op: "delete" }, 0);
    this.keys.set(0);
    this.registered.set(0);
  }

  /** Adds one pair's gain to the viewer counters. */
  add(inc: CounterIncrement): void {
    const { country, pool } = inc;
    for (const [outcome, n] of Object.entries(inc.outcomes)) {
      this.requests.inc({ country, pool, outcome }, n);
      const k = `${country}/${pool}/${outcome}`;
      const t = this.totals.requests.get(k) ?? { country, pool, outcome, n: 0 };
      t.n += n;
      this.totals.requests.set(k, t);
    }
    for (const [result, n] of Object.entries(inc.cache)) {
      this.cache.inc({ country, pool, result }, n);
      const k = `${country}/${pool}/${result}`;
      const t = this.totals.cache.get(k) ?? { country, pool, result, n: 0 };
      t.n += n;
      this.totals.cache.set(k, t);
    }
    this.count(this.starved, this.totals.starved, country, pool, inc.starved);
    this.count(this.failovers, this.totals.failovers, country, pool, inc.failovers);
    if (inc.ttfb.some((n) => n > 0)) this.ttfb.add(country, pool, inc.ttfb, inc.ttfbSeconds);
  }

  private count(
    counter: Counter<"country" | "pool">,
    totals: Map<string, { country: string; pool: string; n: number }>,
    country: string,
    pool: string,
    n: number,
  ): void {
    // a pair's series exists from its first request, at 0 when nothing starved
    counter.inc({ country, pool }, n);
    const k = `${country}/${pool}`;
    const t = totals.get(k) ?? { country, pool, n: 0 };
    t.n += n;
    totals.set(k, t);
  }

  /**
   * Drops every `edge_viewer_*` series (and its total) of the pairs (`CC/pool`) `live` does not
   * hold: a pair the edge no longer keeps is gone from `/metrics`, so pools and countries that come
   * and go do not pile up series. Should its viewers come back, its counters start again from 0,
   * a counter reset to Prometheus. Returns the pairs dropped.
   */
  retain(live: ReadonlySet<string>): number {
    const gone = new Set<string>();
    const sweep = <T extends { country: string; pool: string }>(
      totals: Map<string, T>,
      remove: (t: T) => void,
    ) => {
      for (const [k, t] of totals) {
        const pair = pairKey(t.country, t.pool);
        if (live.has(pair)) continue;
        remove(t);
        totals.delete(k);
        gone.add(pair);
      }
    };
    sweep(this.totals.requests, (t) =>
      this.requests.remove({ country: t.country, pool: t.pool, outcome: t.outcome }),
    );
    sweep(this.totals.cache, (t) =>
      this.cache.remove({ country: t.country, pool: t.pool, result: t.result }),
    );
    sweep(this.totals.starved, (t) => this.starved.remove({ country: t.country, pool: t.pool }));
    sweep(this.totals.failovers, (t) =>
      this.failovers.remove({ country: t.country, pool: t.pool }),
    );
    for (const pair of this.ttfb.retain(live)) gone.add(pair);
    return gone.size;
  }

  /** The totals, for the state file. */
  totalsJson(): CounterTotals {
    return {
      requests: [...this.totals.requests.values()],
      starved: [...this.totals.starved.values()],
      failovers: [...this.totals.failovers.values()],
      cache: [...this.totals.cache.values()],
      ttfb: this.ttfb.snapshot(),
    };
  }

  /** Restores the state file's totals: the counters go on from where the last run left them. */
  restore(t: CounterTotals): void {
    for (const r of t.requests)
      this.add({
        country: r.country,
        pool: r.pool,
        outcomes: { [r.outcome]: r.n },
        cache: {},
        starved: 0,
        failovers: 0,
        ttfb: [],
        ttfbSeconds: 0,
      });
    for (const r of t.cache ?? [])
      this.add({
        country: r.country,
        pool: r.pool,
        outcomes: {},
        cache: { [r.result]: r.n },
        starved: 0,
        failovers: 0,
        ttfb: [],
        ttfbSeconds: 0,
      });
    for (const r of t.starved)
      this.count(this.starved, this.totals.starved, r.country, r.pool, r.n);
    for (const r of t.failovers)
      this.count(this.failovers, this.totals.failovers, r.country, r.pool, r.n);
    for (const h of t.ttfb) this.ttfb.add(h.country, h.pool, h.buckets, h.sum);
  }

  polled(): void {
    this.polls.inc({ result: "ok" });
    this.edgeUp.set(1);
    this.lastSuccess.set(Date.now() / 1000);
  }

  pollFailed(code: ObserveFailureCode): void {
    this.polls.inc({ result: code });
    this.edgeUp.set(0);
  }

  edgeReset(pairs: number): void {
    this.resets.inc(pairs);
  }

  wrote(op: "put" | "delete", keys: number): void {
    this.writes.inc({ op });
    this.keys.set(keys);
  }

  lease(held: boolean, keys: number): void {
    this.registered.set(held ? 1 : 0);
    this.keys.set(keys);
  }
}
