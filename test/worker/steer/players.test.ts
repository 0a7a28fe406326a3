import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../../../testkit/browser.js";
import { type MediaOrigin, startMediaOrigins } from "../../../testkit/media-origins.js";
import { SEGMENT_SECONDS, steerMedia } from "../../../testkit/steer-media.js";
import {
  type FetchedManifest,
  isSegment,
  PLAYER_PAGES,
  playerState,
  recordManifests,
  reportedOn,
  STEER_PLAYERS,
  until,
} from "../../../testkit/steer-players.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { putSteerWorld, STEER_POOLS } from "./steer-world.js";

const DEBUG = "players-debug-token";
const TTL_S = 10;
/** Slack over `TTL` + one segment for the machine (two cores shared with other suites). */
const SLACK_MS = 3000;

describe.each(STEER_PLAYERS)(
  "$name in Chromium steered by the edge (docs/reference.md §15)",
  ({ page, format, report: reportParam }) => {
    let origins: MediaOrigin[];
    let worker: TestWorker;
    let browser: TestBrowser;
    /** Every steering manifest the player fetched, with when. */
    let manifests: FetchedManifest[] = [];
    const origin = (name: string) => {
      const o = origins.find((x) => x.name === name);
      if (!o) throw new Error(name);
      return o;
    };
    const world = { get: origin };
    const segmentsOf = (name: string, since = 0) =>
      origin(name).hits.filter((h) => h.at >= since && isSegment(h.url));

    beforeAll(async () => {
      const media = await steerMedia();
      origins = await startMediaOrigins(STEER_POOLS, media, PLAYER_PAGES);
      worker = await startWorker({
        STEER: "on",
        STEER_TTL_SECONDS: String(TTL_S),
        DEBUG_TOKEN: DEBUG,
        FLOOR_POOL: "use-1",
        EDGE_EJECT_AFTER: "1",
        EDGE_EJECT_SECONDS: "300",
        ORIGIN_HEDGE_MS: "100000",
      });
      await putSteerWorld(worker, world);
      browser = await launchBrowser();
      // Germany (fenced to eu: fra-1, ams-1, par-1; use-1 outside), one sticky viewer.
      await browser.context.setExtraHTTPHeaders({
        "X-Edge-Debug-Token": DEBUG,
        "X-Edge-Debug-Country": "DE",
        "X-Edge-Debug-Viewer": "viewer-1",
      });
      manifests = recordManifests(browser, format);
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await worker?.dispose();
      await Promise.all((origins ?? []).map((o) => o.kill()));
    });

    it("plays from fra-1, moves to the next pathway within TTL + one segment when fra-1 turns unhealthy, then when ams-1 dies, never leaving the fence", async () => {
      const edge = await worker.mf.ready;
      await browser.page.goto(new URL(page, edge).href);
      await until("playback on fra-1", async () =>
        (await playerState(browser)).playing &&
        segmentsOf("fra-1").length >= 2 &&
        manifests.length >= 1
          ? true
          : undefined,
      );
      expect(manifests[0]?.body).toContain('"fra-1"');

      // fra-1 marked unhealthy: the next reload (within TTL) steers the player away.
      const unhealthyAt = Date.now();
      await putSteerWorld(worker, world, { "health/fra-1": { status: "unhealthy" } });
      const moved = await until(
        "a steering answer without fra-1 and the player reporting ams-1",
        () =>
          manifests.find((m) => m.at > unhealthyAt && reportedOn(m.url, reportParam) === "ams-1"),
        (TTL_S * 2 + 10) * 1000,
      );
      const firstAms = await until(
        "a segment from ams-1",
        () => segmentsOf("ams-1", unhealthyAt)[0],
      );
      expect(firstAms.at - unhealthyAt).toBeLessThanOrEqual(
        TTL_S * 1000 + SEGMENT_SECONDS * 1000 + SLACK_MS,
      );
      expect(segmentsOf("fra-1", firstAms.at + 500)).toEqual([]);
      expect(moved.at - unhealthyAt).toBeLessThanOrEqual(2 * TTL_S * 1000 + SLACK_MS);

      // ams-1 dies: the edge ejects it on the first refused request; steering moves on to par-1.
      const killedAt = Date.now();
      await origin("ams-1").kill();
      await until(
        "the player reporting par-1",
        () => manifests.find((m) => m.at > killedAt && reportedOn(m.url, reportParam) === "par-1"),
        (TTL_S * 2 + 10) * 1000,
      );
      const firstPar = await until("a segment from par-1", () => segmentsOf("par-1", killedAt)[0]);
      expect(firstPar.at - killedAt).toBeLessThanOrEqual(
        TTL_S * 1000 + SEGMENT_SECONDS * 1000 + SLACK_MS,
      );

      if (format === "hls") {
        // hls.js took the cloned pathways: their playlists carry the pin (origins never see it).
        expect(browser.requests.some((u) => u.includes("edge_pathway=ams-1"))).toBe(true);
        expect(browser.requests.some((u) => u.includes("edge_pathway=par-1"))).toBe(true);
        for (const o of origins)
          expect(o.hits.filter((h) => h.url.includes("edge_pathway"))).toEqual([]);
      }
      const state = await playerState(browser);
      expect(state.stalls.filter((ms) => ms > SEGMENT_SECONDS * 1000)).toEqual([]);
      // Fenced: no manifest offered use-1, and use-1 never saw a request.
      for (const m of manifests) expect(m.body).not.toContain("use-1");
      expect(origin("use-1").hits).toEqual([]);
      expect(browser.offLoopback).toEqual([]);
    }, 180_000);
  },
);
