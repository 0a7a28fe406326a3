import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** How the edge answers its observations endpoint. */
export type EdgeMode = "ok" | "wrong-token" | "junk-json" | "junk-shape" | "error-500";

interface Bucket {
  outcomes: Record<string, number>;
  starved: number;
  failovers: number;
}

/**
 * A real loopback HTTP server that answers `GET /__edge/observations?window=S` as
 * docs/reference.md §12 says the edge does: one-minute buckets kept for 15 minutes, a window of
 * S seconds being the current minute's bucket and the S/60 − 1 before it, with the bearer token
 * checked. Tests record requests into its buckets directly; it stands in for the Worker's
 * Durable Object aggregator, which another part of the project builds.
 */
export class ObservationsEdge {
  mode: EdgeMode = "ok";
  /** Polls answered, by window. */
  readonly polls: number[] = [];
  private buckets = new Map<number, Map<string, Bucket>>();
  private readonly quantiles = new Map<string, { p50: number; p90: number; p99: number }>();
  private server: Server | null = null;
  port = 0;

  constructor(readonly token: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static minute(at = Date.now()): number {
    return Math.floor(at / 60_000);
  }

  /** Adds requests of one (country, pool) to the bucket `minutesAgo` before the current one. */
  record(
    country: string,
    pool: string,
    add: { outcomes: Record<string, number>; starved?: number; failovers?: number },
    minutesAgo = 0,
  ): void {
    const m = ObservationsEdge.minute() - minutesAgo;
    let bucket = this.buckets.get(m);
    if (!bucket) {
      bucket = new Map();
      this.buckets.set(m, bucket);
    }
    const key = `${country}/${pool}`;
    const b = bucket.get(key) ?? { outcomes: {}, starved: 0, failovers: 0 };
    for (const [o, n] of Object.entries(add.outcomes)) b.outcomes[o] = (b.outcomes[o] ?? 0) + n;
    b.starved += add.starved ?? 0;
    b.failovers += add.failovers ?? 0;
    bucket.set(key, b);
  }

  /** The TTFB quantiles (ms) the edge reports for a pair, in every window. */
  setTtfb(country: string, pool: string, q: { p50: number; p90: number; p99: number }): void {
    this.quantiles.set(`${country}/${pool}`, q);
  }

  /** The aggregator restarts: every bucket is gone. */
  restartAggregator(): void {
    this.buckets = new Map();
  }

  document(windowS: number) {
    const now = ObservationsEdge.minute();
    const sums = new Map<string, Bucket>();
    for (const [m, bucket] of this.buckets) {
      if (m <= now - windowS / 60 || m > now) continue;
      for (const [key, b] of bucket) {
        const s = sums.get(key) ?? { outcomes: {}, starved: 0, failovers: 0 };
        for (const [o, n] of Object.entries(b.outcomes)) s.outcomes[o] = (s.outcomes[o] ?? 0) + n;
        s.starved += b.starved;
        s.failovers += b.failovers;
        sums.set(key, s);
      }
    }
    return {
      window_s: windowS,
      until: new Date().toISOString(),
      rows: [...sums].map(([key, s]) => {
        const [country, pool] = key.split("/");
        const q = this.quantiles.get(key);
        return {
          country,
          pool,
          requests: Object.values(s.outcomes).reduce((a, b) => a + b, 0),
          outcomes: s.outcomes,
          failovers: s.failovers,
          ttfb_ms: q ?? { p50: null, p90: null, p99: null },
          starved: s.starved,
          throughput_kbps_p50: null,
        };
      }),
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
      res.end(JSON.stringify(this.document(windowS)));
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
