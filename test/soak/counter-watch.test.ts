import { describe, expect, it } from "vitest";
import { CounterWatch, FORGET_AFTER_SECONDS } from "../../soak/counter-watch.js";

const scrape = (requests: number, starved: number, extra = "") =>
  [
    "# TYPE edge_viewer_requests_total counter",
    `edge_viewer_requests_total{country="DE",pool="p02",outcome="ok"} ${requests}`,
    `edge_viewer_requests_total{country="DE",pool="p02",outcome="timeout"} 1`,
    `edge_viewer_starved_total{country="DE",pool="p02"} ${starved}`,
    `edge_viewer_ttfb_seconds_bucket{le="0.1",country="DE",pool="p02"} ${requests}`,
    `edge_viewer_ttfb_seconds_count{country="DE",pool="p02"} ${requests}`,
    // not a viewer counter: may go down
    "edge_observer_observed_keys 3",
    extra,
  ].join("\n");

describe("the observer's viewer counters only grow (soak/counter-watch.ts)", () => {
  it("counters that stay or rise, across a restart that restored them, are no drop", () => {
    const w = new CounterWatch();
    w.see(10, "observer#1", scrape(100, 4));
    w.see(
      20,
      "observer#1",
      scrape(100, 4).replace("edge_observer_observed_keys 3", "edge_observer_observed_keys 0"),
    );
    w.see(30, "observer#2", scrape(180, 9));
    expect(w.dropCount).toBe(0);
    expect(w.drops).toEqual([]);
    expect(w.scrapes).toBe(3);
    expect(w.requests).toBe(181);
    expect(w.starved).toBe(9);
  });

  it("a counter that fell, as after a restart that lost its state, is named with its labels", () => {
    const w = new CounterWatch();
    w.see(10, "observer#1", scrape(100, 4));
    w.see(20, "observer#2", scrape(30, 4));
    expect(w.dropCount).toBe(3);
    expect(w.drops[0]).toBe(
      't=20 s observer#2: edge_viewer_requests_total{country="DE",outcome="ok",pool="p02"} fell from 100 to 30',
    );
  });

  it("a series that went missing is a drop; a new one is not", () => {
    const w = new CounterWatch();
    w.see(10, "observer#1", scrape(100, 4, 'edge_viewer_starved_total{country="FR",pool="p03"} 2'));
    w.see(20, "observer#1", scrape(100, 4, 'edge_viewer_starved_total{country="JP",pool="p04"} 0'));
    expect(w.dropCount).toBe(1);
    expect(w.drops).toEqual([
      't=20 s observer#1: edge_viewer_starved_total{country="FR",pool="p03"} went missing',
    ]);
  });

  it("a pair's series may go once its counters have not risen for the edge's minutes, and come back from 0", () => {
    const w = new CounterWatch();
    const fr = (n: number) =>
      `edge_viewer_requests_total{country="FR",pool="p03",outcome="ok"} ${n}`;
    w.see(10, "observer#1", scrape(100, 4, fr(7)));
    w.see(20, "observer#1", scrape(101, 4, fr(9)));
    // DE/p02 rose at 20 s, FR/p03 too: FR going soon after is a drop
    w.see(30, "observer#1", scrape(102, 4));
    expect(w.dropCount).toBe(1);
    w.see(40, "observer#1", scrape(103, 4, fr(9)));
    w.see(40 + FORGET_AFTER_SECONDS - 1, "observer#1", scrape(104, 4, fr(9)));
    expect(w.dropCount).toBe(1);
    w.see(20 + FORGET_AFTER_SECONDS, "observer#1", scrape(105, 4));
    expect(w.dropCount).toBe(1);
    w.see(30 + FORGET_AFTER_SECONDS, "observer#1", scrape(106, 4, fr(2)));
    w.see(40 + FORGET_AFTER_SECONDS, "observer#1", scrape(107, 4, fr(3)));
    expect(w.dropCount).toBe(1);
    expect(w.drops).toEqual([
      't=30 s observer#1: edge_viewer_requests_total{country="FR",outcome="ok",pool="p03"} went missing',
    ]);
  });
});
