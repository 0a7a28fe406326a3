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
  type SteerPlayer,
  until,
} from "../../testkit/steer-players.js";
import { STEER_COUNTRY, type SteerStack, startSteerStack } from "../../testkit/steer-stack.js";

// Real players under the real control plane (docs/reference.md §15): etcd → pusher (dist/, local
// KV) → Worker in workerd, `edgectl heartbeat` checking each media origin, hls.js and dash.js in
// Chromium, each in its own browser, both at once against one stack: every step acts once and
// checks each player, its segments told apart by its stream's path. Tests run in order; each
// leaves the players where the next expects them.

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

/** A player of {@link STEER_PLAYERS} in its own browser, and the steering manifests it fetched. */
type Playing = SteerPlayer & {
  readonly browser: TestBrowser;
  readonly manifests: FetchedManifest[];
};

/** A player's figures of one move, ms (see `moveTo`). */
interface Move {
  readonly player: Playing;
  readonly total: number;
  readonly reportedAfterKnown: number;
}

const BOTH = STEER_PLAYERS.map((p) => p.name).join(" and ");

describe(`${BOTH} at once, steered by the real control plane (docs/reference.md §15)`, () => {
  let stack: SteerStack;
  const players: Playing[] = [];
  const segmentsOf = (pool: string, format: SteerPlayer["format"], since = 0) =>
    stack.origin(pool).hits.filter((h) => h.at >= since && isSegment(h.url, format));
  const reportsSince = (p: Playing, since: number) =>
    p.manifests.filter((m) => m.at >= since).map((m) => reportedOn(m.url, p.report));

  /**
   * Runs `fault` once and waits for each player to take `next`: the first segment of its stream
   * `next`'s origin serves (the edge routes the player's unpinned requests by the new map at
   * once), and the player's own report of `next` on a steering reload. A report comes with the
   * reload after the switch, so it is up to one TTL late: its bound is TTL + one segment + one
   * more TTL. Returns, per player, ms from the fault to that segment, and from the edge knowing
   * (its route shows `next` first) to that report.
   */
  async function moveTo(next: string, fault: () => Promise<void>): Promise<Move[]> {
    const t0 = Date.now();
    await fault();
    const known = stack.routedTo(next, 30_000).then(() => Date.now());
    return Promise.all(
      players.map(async (player) => {
        const first = await until(
          `${player.name}: a segment from ${next}\n${stack.logs()}`,
          () => segmentsOf(next, player.format, t0)[0],
          (2 * TTL_S + 20) * 1000,
        );
        const knownAt = await known;
        const reported = await until(
          `${player.name} reporting ${next}`,
          () =>
            player.manifests.find((m) => m.at >= t0 && reportedOn(m.url, player.report) === next),
          (2 * TTL_S + 10) * 1000,
        );
        const figures = {
          total: first.at - t0,
          reportedAfterKnown: Math.max(0, reported.at - knownAt),
        };
        console.log(`${player.format}: moved to ${next}: ${JSON.stringify(figures)} ms`);
        return { player, ...figures };
      }),
    );
  }

  /** Each player's move within the bounds: its report, and its first segment from the fault. */
  function expectWithinBounds(moves: readonly Move[]) {
    for (const m of moves) {
      expect(m.reportedAfterKnown, m.player.name).toBeLessThanOrEqual(REPORTED_MS);
      expect(m.total, m.player.name).toBeLessThanOrEqual(MOVE_MS + CONTROL_MS);
    }
  }

  beforeAll(async () => {
    stack = await startSteerStack({ ttlS: TTL_S, debugToken: DEBUG, mediaSeconds: 240 });
    await stack.routedTo("fra-1", 60_000);
    for (const p of STEER_PLAYERS) {
      const browser = await launchBrowser();
      players.push({ ...p, browser, manifests: recordManifests(browser, p.format) });
      await browser.context.setExtraHTTPHeaders({
        "X-Edge-Debug-Token": DEBUG,
        "X-Edge-Debug-Country": STEER_COUNTRY,
        "X-Edge-Debug-Viewer": "viewer-1",
      });
    }
  }, 180_000);
  afterAll(async () => {
    await Promise.all(players.map((p) => p.browser.close()));
    await stack?.stop();
  }, 60_000);

  it("each takes steering from the playlist or MPD it fetched through the edge and plays from fra-1", async () => {
    await Promise.all(
      players.map(async (p) => {
        await p.browser.page.goto(new URL(p.page, stack.edgeUrl).href);
        await until(`${p.name}: playback on fra-1 with a steering manifest`, async () =>
          (await playerState(p.browser)).playing &&
          segmentsOf("fra-1", p.format).length >= 2 &&
          p.manifests.length >= 1
            ? true
            : undefined,
        );
      }),
    );
    for (const p of players) {
      const first = JSON.parse(p.manifests[0]?.body ?? "{}") as Record<string, unknown>;
      expect(first.TTL, p.name).toBe(TTL_S);
      expect(first["PATHWAY-PRIORITY"], p.name).toEqual(["fra-1", "ams-1", "par-1"]);
    }
  }, 90_000);

  it(`each keeps its pathway while nothing changes (${STEADY_S} s, ${STEADY_S / TTL_S} reloads)`, async () => {
    const from = Date.now();
    await new Promise((r) => setTimeout(r, STEADY_S * 1000));
    for (const p of players) {
      const seen = p.manifests.filter((m) => m.at >= from);
      expect(seen.length, p.name).toBeGreaterThanOrEqual(STEADY_S / TTL_S - 1);
      for (const m of seen) {
        expect(m.status, p.name).toBe(200);
        expect(JSON.parse(m.body)["PATHWAY-PRIORITY"], p.name).toEqual(["fra-1", "ams-1", "par-1"]);
      }
      expect(new Set(reportsSince(p, from)), p.name).toEqual(new Set(["fra-1"]));
      for (const other of ["ams-1", "par-1", "use-1"])
        expect(segmentsOf(other, p.format, from), p.name).toEqual([]);
      expect(segmentsOf("fra-1", p.format, from).length, p.name).toBeGreaterThanOrEqual(
        STEADY_S / SEGMENT_SECONDS - 3,
      );
    }
  }, 60_000);

  it("each moves to ams-1 within TTL + one segment of the heartbeat marking fra-1 unhealthy", async () => {
    expectWithinBounds(await moveTo("ams-1", async () => stack.origin("fra-1").setHealthy(false)));
    const settled = Date.now() + SEGMENT_SECONDS * 1000;
    await new Promise((r) => setTimeout(r, 2 * SEGMENT_SECONDS * 1000));
    for (const p of players) expect(segmentsOf("fra-1", p.format, settled), p.name).toEqual([]);
  }, 90_000);

  it("each moves to par-1 within TTL + one segment of `edgectl boost` sending its country there", async () => {
    const moves = await moveTo("par-1", async () => {
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
    expectWithinBounds(moves);
  }, 90_000);

  it("each moves to ams-1 within TTL + one segment when par-1's origin is killed", async () => {
    expectWithinBounds(await moveTo("ams-1", () => stack.origin("par-1").kill()));
  }, 90_000);

  it("neither was offered use-1 (outside their fence), which saw no request, nor stalled longer than a segment", async () => {
    expect(stack.origin("use-1").hits).toEqual([]);
    for (const p of players) {
      expect(p.manifests.length, p.name).toBeGreaterThanOrEqual(5);
      for (const m of p.manifests) expect(m.body, p.name).not.toContain("use-1");
      expect(
        p.browser.requests.filter((u) => u.includes("use-1")),
        p.name,
      ).toEqual([]);
      const state = await playerState(p.browser);
      expect(
        state.stalls.filter((ms) => ms > SEGMENT_SECONDS * 1000),
        p.name,
      ).toEqual([]);
      expect(p.browser.offLoopback, p.name).toEqual([]);
    }
  });

  it("hls.js took the cloned pathways: their playlists carry the pin, which no origin ever saw", () => {
    const requests = players.find((p) => p.format === "hls")?.browser.requests ?? [];
    expect(requests.some((u) => u.includes("edge_pathway=ams-1"))).toBe(true);
    expect(requests.some((u) => u.includes("edge_pathway=par-1"))).toBe(true);
    for (const pool of ["fra-1", "ams-1", "par-1", "use-1"])
      expect(stack.origin(pool).hits.filter((h) => h.url.includes("edge_pathway"))).toEqual([]);
  });
});
