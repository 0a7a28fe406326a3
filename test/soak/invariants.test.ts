import { describe, expect, it } from "vitest";
import { invariantFailures, type RunRecord } from "../../soak/invariants.js";
import type { ViewerFindings } from "../../soak/viewer-figures.js";

const TAB = {
  opened: 0,
  failed: 0,
  maps: 0,
  statuses: 0,
  pings: 0,
  maxGapMs: 5_100,
  endedEarly: null,
};

/** Viewers' side where everything held: counters grew, keys on the lease, 6 minutes held. */
const VIEWERS: ViewerFindings = {
  counters: { scrapes: 30, requests: 12_000, starved: 900, dropCount: 0, drops: [] },
  offLease: [],
  offLeaseCount: 0,
  maxKeys: 40,
  maxRows: 5_000,
  maxMinutesHeld: 6,
  maxStorageBytes: 3 * 2 ** 20,
};

/** A 300 s run where everything held: 30 checks, all 200, leases back, 10 changes/s. */
const HELD: RunRecord = {
  seconds: 300,
  endT: 300,
  convergences: Array.from({ length: 30 }, (_, i) => ({ t: i * 10, ms: 500, mismatch: null })),
  answers: new Map([[200, 14_000]]),
  leasePolls: Array.from({ length: 150 }, (_, i) => ({ t: i * 2, held: 28 })),
  kills: [{ t: 63, what: "heartbeat p02", ttl: 10 }],
  baseline: 28,
  finalHeld: 28,
  seriesLeft: [],
  changes: 3_000,
  ui: {
    held: { ...TAB, opened: 1, maps: 40, statuses: 300, pings: 60 },
    reloaded: { ...TAB, opened: 5, maps: 45, statuses: 300, pings: 55 },
  },
  viewers: VIEWERS,
};

describe("the soak's invariants (soak/README.md)", () => {
  it("a run where everything held has no failure", () => {
    expect(invariantFailures(HELD)).toEqual([]);
  });

  it("names a check that did not converge, an answer that was not 2xx, and a lease not given back", () => {
    const failures = invariantFailures({
      ...HELD,
      convergences: [...HELD.convergences, { t: 120, ms: null, mismatch: "DE: fra-1≠ams-1" }],
      answers: new Map([
        [200, 14_000],
        [502, 3],
        [0, 1],
      ]),
      finalHeld: 29,
    });
    expect(failures).toEqual([
      "invariant: at t=120 s KV did not equal compile(etcd) within 30 s: DE: fra-1≠ams-1",
      "invariant: the Worker answered 3 × 502",
      "invariant: the Worker answered 1 × no answer",
      "invariant: leases held at the end 29, at the start 28",
    ]);
  });

  it("fails a run with too few checks, a series left behind or a slow driver", () => {
    const failures = invariantFailures({
      ...HELD,
      convergences: HELD.convergences.slice(0, 20),
      seriesLeft: ["pusher:soak-a exports tmp-3"],
      changes: 1_000,
    });
    expect(failures).toEqual([
      "invariant: only 20 convergence checks ran",
      "series: pusher:soak-a exports tmp-3",
      "driver: only 1000 changes in 300 s (goal 10/s)",
    ]);
  });

  it("fails leases that never came back after a kill", () => {
    const polls = HELD.leasePolls.map((p) => ({ t: p.t, held: p.t > 60 ? 29 : 28 }));
    const failures = invariantFailures({ ...HELD, leasePolls: polls, finalHeld: 28 });
    expect(
      failures.some((f) => f.startsWith("invariant: leases did not return to baseline after")),
    ).toBe(true);
  });

  it("fails a held /ui stream that ended, went silent or got no map, and reloads that failed", () => {
    const failures = invariantFailures({
      ...HELD,
      ui: {
        held: {
          ...HELD.ui.held,
          maps: 0,
          maxGapMs: 21_000,
          endedEarly: "the pusher ended the stream",
        },
        reloaded: { ...HELD.ui.reloaded, failed: 2, endedEarly: "answered 503" },
      },
    });
    expect(failures).toEqual([
      "ui: the held /ui/events stream ended: the pusher ended the stream",
      "ui: the held /ui/events stream went 21.0 s without an event (pings every 5 s)",
      "ui: the held /ui/events stream got no map event",
      "ui: 2 of 7 reloaded /ui/events streams failed: answered 503",
    ]);
  });

  it("fails viewer counters that fell, keys off the observer's lease and minutes kept too long", () => {
    const failures = invariantFailures({
      ...HELD,
      viewers: {
        ...VIEWERS,
        counters: {
          ...VIEWERS.counters,
          dropCount: 2,
          drops: ['t=70 s observer#9: edge_viewer_requests_total{country="DE"} fell from 9 to 3'],
        },
        offLease: ["t=80 s: /r/observed/DE/p02 has no lease"],
        offLeaseCount: 1,
        maxMinutesHeld: 19,
      },
    });
    expect(failures).toEqual([
      'observer: viewer counters fell or went missing 2 times (they only grow): t=70 s observer#9: edge_viewer_requests_total{country="DE"} fell from 9 to 3',
      "observed/: 1 times a key was not on the observer's lease: t=80 s: /r/observed/DE/p02 has no lease",
      "aggregator: it held 19 minutes of rows (it keeps 16)",
    ]);
  });

  it("fails a run whose viewers' side recorded nothing: no count, no starvation, no key, no row", () => {
    const none = { ...VIEWERS, maxKeys: 0, maxRows: 0 };
    expect(
      invariantFailures({
        ...HELD,
        viewers: { ...none, counters: { ...VIEWERS.counters, scrapes: 0, requests: 0 } },
      }),
    ).toEqual([
      "observer: its /metrics never answered",
      "observer: it wrote no observed/ key",
      "aggregator: its Durable Objects stored no rows",
    ]);
    expect(
      invariantFailures({
        ...HELD,
        viewers: { ...VIEWERS, counters: { ...VIEWERS.counters, requests: 0 } },
      }),
    ).toEqual(["observer: it counted no viewer requests"]);
    expect(
      invariantFailures({
        ...HELD,
        viewers: { ...VIEWERS, counters: { ...VIEWERS.counters, starved: 0 } },
      }),
    ).toEqual(["observer: it counted no starved requests (the players' CMCD did not reach it)"]);
  });
});
