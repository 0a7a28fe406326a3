import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CACHE_RESULTS, type CacheResult, OUTCOMES, type Outcome } from "../../core/index.js";
import { observationRows } from "../../worker/observe/observation-rows.js";
import { addSample, emptyTally, type Tally } from "../../worker/observe/tally.js";
import { minuteOf, type TallyRow } from "../../worker/observe/tally-row.js";

/** How the edge answers its observations endpoint. */
export type EdgeMode = "ok" | "wrong-token" | "junk-json" | "junk-shape" | "error-500";

/** Outcomes whose requests got an origin's response headers (a TTFB sample). */
const WITH_TTFB: readonly string[] = ["ok", "client_error", "origin_error"];

/**
 * A real loopback HTTP server that answers `GET /__edge/observations?window=S[&by=minute]` with
 * the Worker's own code (its tallies and `observationRows`, docs/reference.md §12) and the
 * bearer token checked, but whose one-minute tallies the test fills directly and whose answer
 * can be made to fail (`mode`). The whole chain, with the Worker in workerd, is
 * test/e2e/viewers-observed.test.ts.
 */
export class ObservationsEdge {
  mode: EdgeMode = "ok";
  /** Polls answered, by window. */
  readonly polls: number[] = [];
  private tallies = new Map<string, TallyRow>();
  private readonly quantiles = new Map<string, { p50: number; p90: number; p99: number }>();
  private server: Server | null = null;
  port = 0;

  /** `now` is the edge's clock (ms since the epoch): its current minute and its answers' `until`. */
  constructor(
    readonly token: string,
    private readonly now: () => number = Date.now,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Adds requests of one (country, pool) to the minute `minutesAgo` before the current one.
   * Requests with an origin's answer get times to first byte as `setTtfb` says (default 50 ms):
   * half at its p50, two fifths at its p90, the rest at its p99.
   */
  record(
    country: string,
    pool: string,
    add: {
      outcomes: Partial<Record<Outcome, number>>;
      starved?: number;
      failovers?: number;
      /** Cache results of the first requests, in `CACHE_RESULTS` order; the rest have none. */
      cache?: Partial<Record<CacheResult, number>>;
    },
    minutesAgo = 0,
  ): void {
    const minute = minuteOf(this.now()) - minutesAgo;
    const key = `${minute}|${country}|${pool}`;
    let row = this.tallies.get(key);
    if (!row) {
      row = { minute, country, pool, tally: emptyTally() };
      this.tallies.set(key, row);
    }
    const t: Tally = row.tally;
    const q = this.quantiles.get(`${country}/${pool}`) ?? { p50: 50, p90: 50, p99: 50 };
    const withTtfb = WITH_TTFB.reduce((a, o) => a + (add.outcomes[o as Outcome] ?? 0), 0);
    let timed = 0;
    let starved = add.starved ?? 0;
    let failovers = add.failovers ?? 0;
    const cache = CACHE_RESULTS.flatMap((r, i) => new Array<number>(add.cache?.[r] ?? 0).fill(i));
    for (const [o, n] of Object.entries(add.outcomes)) {
      const outcome = OUTCOMES.indexOf(o as Outcome);
      for (let i = 0; i < (n ?? 0); i++) {
        let ttfbMs: number | null = null;
        if (WITH_TTFB.includes(o)) {
          ttfbMs =
            timed < Math.ceil(withTtfb * 0.5)
              ? q.p50
              : timed < Math.ceil(withTtfb * 0.9)
                ? q.p90
                : q.p99;
          timed++;
        }
        addSample(t, {
          outcome,
          cache: cache.shift() ?? null,
          failover: failovers-- > 0,
          ttfbMs,
          starved: starved-- > 0 ? true : null,
          throughputKbps: null,
        });
      }
    }
  }

  /** The times to first byte (ms) of the requests recorded from now on, for a pair. */
  setTtfb(country: string, pool: string, q: { p50: number; p90: number; p99: number }): void {
    this.quantiles.set(`${country}/${pool}`, q);
  }

  /** The aggregator loses its sums: every minute is gone. */
  restartAggregator(): void {
    this.tallies = new Map();
  }

  document(windowS: number, byMinute: boolean) {
    const now = this.now();
    const since = minuteOf(now - windowS * 1000);
    return {
      window_s: windowS,
      since: new Date(since * 60_000).toISOString(),
      until: new Date(now).toISOString(),
      rows: observationRows(
        [...this.tallies.values()].filter((r) => r.minute >= since),
        byMinute,
      ),
    };
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://edge");
      if (url.pathname !== "/__edge/observations") return res.writeHead(404).end();
      if (req.headers.authorization !== `Bearer ${this.token}` || this.mode === "wrong-token")
        return res
          .writeHead(401, { "content-type": "application/json" })
          .end('{"error":"unauthorized"}');
      if (this.mode === "error-500") return res.writeHead(500).end();
      const windowS = Number(url.searchParams.get("window") ?? 60);
      this.polls.push(windowS);
      res.writeHead(200, { "content-type": "application/json" });
      if (this.mode === "junk-json") return res.end("<html>\u001b[31mnot json");
      if (this.mode === "junk-shape")
        return res.end(
          JSON.stringify({ window_s: windowS, rows: [{ country: "BR", requests: -1 }] }),
        );
      res.end(JSON.stringify(this.document(windowS, url.searchParams.get("by") === "minute")));
    });
    await new Promise<void>((r) => this.server?.listen(port, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Stops answering: the port is closed (connections refused). */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
}
