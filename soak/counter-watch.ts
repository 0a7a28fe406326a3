import { parsePromText } from "../testkit/prom-text.js";
import { AGGREGATOR_KEPT_MINUTES } from "./layout.js";

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

/**
 * Seconds without a rise of any of its counters after which a pair's series may go: the observer
 * forgets a pair once the edge's 16 minutes hold none of its requests (docs/reference.md §12).
 * Its last rise is seen up to a minute and a flush after its last request's minute began, so two
 * minutes less.
 */
export const FORGET_AFTER_SECONDS = (AGGREGATOR_KEPT_MINUTES - 2) * 60;

/** At most this many drops are kept in words (the count goes on). */
const KEPT_DROPS = 20;

/**
 * Watches the observer's `/metrics` scrape after scrape: every series of {@link VIEWER_COUNTERS}
 * once seen must be there in every later scrape, at its value or above, until its pair's
 * counters have not risen for {@link FORGET_AFTER_SECONDS}; then it may go (and come back from 0).
 */
export class CounterWatch {
  private readonly last = new Map<string, { readonly value: number; readonly pair: string }>();
  /** By `CC/pool`, when one of its counters last rose (s). */
  private readonly rose = new Map<string, number>();
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
    const now = new Map<string, { readonly value: number; readonly pair: string }>();
    let requests = 0;
    let starved = 0;
    for (const s of parsePromText(text)) {
      if (!VIEWER_COUNTERS.includes(s.name)) continue;
      const labels = Object.entries(s.labels)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}="${v}"`)
        .join(",");
      const series = `${s.name}{${labels}}`;
      const pair = `${s.labels.country}/${s.labels.pool}`;
      now.set(series, { value: s.value, pair });
      if (s.value > (this.last.get(series)?.value ?? 0)) this.rose.set(pair, t);
      if (s.name === "edge_viewer_requests_total") requests += s.value;
      if (s.name === "edge_viewer_starved_total") starved += s.value;
    }
    for (const [series, { value: before, pair }] of this.last) {
      const after = now.get(series)?.value;
      if (after !== undefined && after >= before) continue;
      if (after === undefined && t - (this.rose.get(pair) ?? t) >= FORGET_AFTER_SECONDS) {
        this.last.delete(series);
        continue;
      }
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
