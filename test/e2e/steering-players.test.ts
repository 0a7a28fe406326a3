import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../../testkit/browser.js";
import { SEGMENT_SECONDS } from "../../testkit/steer-media.js";
import {
  type FetchedManifest,
  isSegment,
  playerState,
  recordManifests,
  reportedOn,
  STEER_PLAYERS,
  until,
} from "../../testkit/steer-players.js";
import { STEER_COUNTRY, type SteerStack, startSteerStack } from "../../testkit/steer-stack.js";

// Real players under the real control plane (docs/reference.md §15): etcd → pusher (dist/, local
// KV) → Worker in workerd, `edgectl heartbeat` checking each media origin, hls.js and dash.js in
// Chromium. Tests run in order; each leaves the player where the next expects it.

const DEBUG = "steer-e2e-debug-token";
const TTL_S = 10;
/** Slack over `TTL` + one segment for the machine (two cores shared with other suites). */
const SLACK_MS = 3_000;
/** The bound of a move once the edge knows: the player reloads within TTL, then fetches a segment. */
const MOVE_MS = TTL_S * 1000 + SEGMENT_SECONDS * 1000 + SLACK_MS;
/** The control plane's share on top: 3 failed checks 0.5 s apart, the pusher, the isolate's 1 s. */
const CONTROL_MS = 5_000;
/** The bound of the player's report of its switch once the edge knows: a TTL after the move. */
const REPORTED_MS = MOVE_MS + TTL_S * 1000;
/** How long nothing changes in the no-flapping check (the 5-minute one is `npm run bench`'s). */
const STEADY_S = 3 * TTL_S;

describe.each(STEER_PLAYERS)(
  "$name steered by the real control plane (docs/reference.md §15)",
  ({ page, format, report }) => {
    let stack: SteerStack;
    let browser: TestBrowser;
    let manifests: FetchedManifest[] = [];
    const segmentsOf = (pool: string, since = 0) =>
      stack.origin(pool).hits.filter((h) => h.at >= since && isSegment(h.url));
    const reportsSince = (since: number) =>
      manifests.filter((m) => m.at >= since).map((m) => reportedOn(m.url, report));

    /**
     * Runs `fault` and waits for the player to take `next`: the first segment `next`'s origin
     * serves (the edge routes the player's unpinned requests by the new map at once), and the
     * player's own report of `next` on a steering reload. A report comes with the reload after
     * the switch, so it is up to one TTL late: its bound is TTL + one segment + one more TTL.
     * Returns ms from the fault to that segment, and from the edge knowing (its route shows
     * `next` first) to that report.
     */
    async function moveTo(next: string, fault: () => Promise<void>) {
      const t0 = Date.now();
      await fault();
      const known = stack.routedTo(next, 30_000).then(() => Date.now());
      const first = await until(
        `a segment from ${next}\n${stack.logs()}`,
        () => segmentsOf(next, t0)[0],
        (2 * TTL_S + 20) * 1000,
      );
      const knownAt = await known;
      const reported = await until(
        `the player reporting ${next}`,
        () => manifests.find((m) => m.at >= t0 && reportedOn(m.url, report) === next),
        (2 * TTL_S + 10) * 1000,
      );
      const figures = {
        total: first.at - t0,
        reportedAfterKnown: Math.max(0, reported.at - knownAt),
      };
      console.log(`${format}: moved to ${next}: ${JSON.stringify(figures)} ms`);
      return figures;
    }

    beforeAll(async () => {
      stack = await startSteerStack({ ttlS: TTL_S, debugToken: DEBUG, mediaSeconds: 240 });
      await stack.routedTo("fra-1", 60_000);
      browser = await launchBrowser();
      await browser.context.setExtraHTTPHeaders({
        "X-Edge-Debug-Token": DEBUG,
        "X-Edge-Debug-Country": STEER_COUNTRY,
        "X-Edge-Debug-Viewer": "viewer-1",
      });
      manifests = recordManifests(browser, format);
    }, 180_000);
    afterAll(async () => {
      await browser?.close();
      await stack?.stop();
    }, 60_000);

    it("takes steering from the playlist or MPD it fetched through the edge and plays from fra-1", async () => {
      await browser.page.goto(new URL(page, stack.edgeUrl).href);
      await until("playback on fra-1 with a steering manifest", async () =>
        (await playerState(browser)).playing &&
        segmentsOf("fra-1").length >= 2 &&
        manifests.length >= 1
          ? true
          : undefined,
      );
      const first = JSON.parse(manifests[0]?.body ?? "{}") as Record<string, unknown>;
      expect(first.TTL).toBe(TTL_S);
      expect(first["PATHWAY-PRIORITY"]).toEqual(["fra-1", "ams-1", "par-1"]);
    }, 90_000);

    it(`keeps its pathway while nothing changes (${STEADY_S} s, ${STEADY_S / TTL_S} reloads)`, async () => {
      const from = Date.now();
      await new Promise((r) => setTimeout(r, STEADY_S * 1000));
      const seen = manifests.filter((m) => m.at >= from);
      expect(seen.length).toBeGreaterThanOrEqual(STEADY_S / TTL_S - 1);
      for (const m of seen) {
        expect(m.status).toBe(200);
        expect(JSON.parse(m.body)["PATHWAY-PRIORITY"]).toEqual(["fra-1", "ams-1", "par-1"]);
      }
      expect(new Set(reportsSince(from))).toEqual(new Set(["fra-1"]));
      for (const other of ["ams-1", "par-1", "use-1"]) expect(segmentsOf(other, from)).toEqual([]);
      expect(segmentsOf("fra-1", from).length).toBeGreaterThanOrEqual(
        STEADY_S / SEGMENT_SECONDS - 3,
      );
    }, 60_000);

    it("moves to ams-1 within TTL + one segment of the heartbeat marking fra-1 unhealthy", async () => {
      const moved = await moveTo("ams-1", async () => stack.origin("fra-1").setHealthy(false));
      expect(moved.reportedAfterKnown).toBeLessThanOrEqual(REPORTED_MS);
      expect(moved.total).toBeLessThanOrEqual(MOVE_MS + CONTROL_MS);
      const settled = Date.now() + SEGMENT_SECONDS * 1000;
      await new Promise((r) => setTimeout(r, 2 * SEGMENT_SECONDS * 1000));
      expect(segmentsOf("fra-1", settled)).toEqual([]);
    }, 90_000);

    it("moves to par-1 within TTL + one segment of `edgectl boost` sending its country there", async () => {
      const moved = await moveTo("par-1", async () => {
        const r = await stack.edgectl(
          "boost",
          STEER_COUNTRY,
          "--pool",
          "par-1",
          "--fallbacks",
          "ams-1,fra-1",
          "--ttl",
          "10m",
          "--reason",
          "steering e2e",
        );
        expect(r.code, r.stdout + r.stderr).toBe(0);
      });
      expect(moved.reportedAfterKnown).toBeLessThanOrEqual(REPORTED_MS);
      expect(moved.total).toBeLessThanOrEqual(MOVE_MS + CONTROL_MS);
    }, 90_000);

    it("moves to ams-1 within TTL + one segment when par-1's origin is killed", async () => {
      const moved = await moveTo("ams-1", () => stack.origin("par-1").kill());
      expect(moved.reportedAfterKnown).toBeLessThanOrEqual(REPORTED_MS);
      expect(moved.total).toBeLessThanOrEqual(MOVE_MS + CONTROL_MS);
    }, 90_000);

    it("was never offered use-1 (outside its fence), which saw no request, and never stalled longer than a segment", async () => {
      expect(manifests.length).toBeGreaterThanOrEqual(5);
      for (const m of manifests) expect(m.body).not.toContain("use-1");
      expect(browser.requests.filter((u) => u.includes("use-1"))).toEqual([]);
      expect(stack.origin("use-1").hits).toEqual([]);
      const state = await playerState(browser);
      expect(state.stalls.filter((ms) => ms > SEGMENT_SECONDS * 1000)).toEqual([]);
      expect(browser.offLoopback).toEqual([]);
    });

    if (format === "hls")
      it("took the cloned pathways: their playlists carry the pin, which no origin ever saw", () => {
        expect(browser.requests.some((u) => u.includes("edge_pathway=ams-1"))).toBe(true);
        expect(browser.requests.some((u) => u.includes("edge_pathway=par-1"))).toBe(true);
        for (const pool of ["fra-1", "ams-1", "par-1", "use-1"])
          expect(stack.origin(pool).hits.filter((h) => h.url.includes("edge_pathway"))).toEqual([]);
      });
  },
);
