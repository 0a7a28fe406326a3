import { parsePromText } from "../testkit/prom-text.js";

/** The observer's viewer counters (docs/reference.md §12): they only grow, across its restarts. */
export const VIEWER_COUNTERS: readonly string[] = [
  "edge_viewer_requests_total",
  "edge_viewer_starved_total",
  "edge_viewer_failovers_total",
  "edge_viewer_cache_total",
  "edge_viewer_ttfb_seconds_bucket",
  "edge_viewer_ttfb_seconds_count",
  "edge_viewer_ttfb_seconds_sum",
];

/** At most this many drops are kept in words (the count goes on). */
const KEPT_DROPS = 20;

/**
 * Watches the observer's `/metrics` scrape after scrape: every series of {@link VIEWER_COUNTERS}
 * once seen must be there in every later scrape, at its value or above.
 */
export class CounterWatch {
  private readonly last = new Map<string, number>();
  /** Scrapes seen. */
  scrapes = 0;
  /** Series that fell or went missing, counted once per scrape. */
  dropCount = 0;
  /** The first drops, in words. */
  readonly drops: string[] = [];
  /** The sum of `edge_viewer_requests_total` at the last scrape. */
  requests = 0;
  /** The sum of `edge_viewer_starved_total` at the last scrape. */
  starved = 0;

  /** Takes one scrape of the observer at `t` (s), by the process `who`. */
  see(t: number, who: string, text: string): void {
    this.scrapes += 1;
    const now = new Map<string, number>();
    let requests = 0;
    let starved = 0;
    for (const s of parsePromText(text)) {
      if (!VIEWER_COUNTERS.includes(s.name)) continue;
      const labels = Object.entries(s.labels)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}="${v}"`)
        .join(",");
      now.set(`${s.name}{${labels}}`, s.value);
      if (s.name === "edge_viewer_requests_total") requests += s.value;
      if (s.name === "edge_viewer_starved_total") starved += s.value;
    }
    for (const [series, before] of this.last) {
      const after = now.get(series);
      if (after !== undefined && after >= before) continue;
      this.dropCount += 1;
      if (this.drops.length < KEPT_DROPS)
        this.drops.push(
          `t=${t.toFixed(0)} s ${who}: ${series} ${after === undefined ? "went missing" : `fell from ${before} to ${after}`}`,
        );
    }
    for (const [series, v] of now) this.last.set(series, v);
    this.requests = requests;
    this.starved = starved;
  }
}
