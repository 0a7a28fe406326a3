import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../../../testkit/browser.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { SEGMENT_SECONDS, steerMedia } from "./media-fixture.js";
import { type MediaOrigin, startMediaOrigins } from "./media-origins.js";
import { putSteerWorld, STEER_POOLS } from "./steer-world.js";

const DEBUG = "players-debug-token";
const TTL_S = 10;
/** Slack over `TTL` + one segment for the machine (two cores shared with other suites). */
const SLACK_MS = 3000;

/** What each page keeps: stalls after playback began, and the player's current pathway. */
const PAGE_COMMON = `
window.steer = { stalls: [], errors: [], playing: false };
const v = document.getElementById("v");
let waitingSince = null;
v.addEventListener("waiting", () => { if (steer.playing) waitingSince = performance.now(); });
v.addEventListener("playing", () => {
  steer.playing = true;
  if (waitingSince !== null) steer.stalls.push(performance.now() - waitingSince);
  waitingSince = null;
});`;

const PAGES = {
  "/player-hls.html": `<!doctype html><video id="v" muted autoplay playsinline></video>
<script src="/lib/hls.js"></script><script>${PAGE_COMMON}
const hls = new Hls({ maxBufferLength: ${2 * SEGMENT_SECONDS}, maxMaxBufferLength: ${2 * SEGMENT_SECONDS} });
hls.on(Hls.Events.ERROR, (_e, d) => steer.errors.push(d.details + (d.fatal ? " fatal" : "")));
steer.pathway = () => hls.levels[Math.max(hls.currentLevel, 0)]?.pathwayId ?? null;
hls.loadSource("/media/hls/master.m3u8");
hls.attachMedia(v);
</script>`,
  "/player-dash.html": `<!doctype html><video id="v" muted autoplay playsinline></video>
<script src="/lib/dash.js"></script><script>${PAGE_COMMON}
const player = dashjs.MediaPlayer().create();
player.updateSettings({ streaming: { buffer: { bufferTimeAtTopQuality: ${2 * SEGMENT_SECONDS}, bufferTimeDefault: ${2 * SEGMENT_SECONDS} } } });
player.on(dashjs.MediaPlayer.events.ERROR, (e) => steer.errors.push(JSON.stringify(e.error ?? e)));
player.initialize(v, "/media/dash/stream.mpd", true);
</script>`,
};

/**
 * The pathway a steering request reports: hls.js sends `_HLS_pathway=ams-1`, dash.js a quoted
 * list of the pathways used since its last reload (`_DASH_pathway="fra-1,ams-1"`), latest last.
 */
function reportedOn(url: string, param: string): string | undefined {
  const raw = new URL(url).searchParams.get(param) ?? "";
  return raw.replace(/^"|"$/g, "").split(",").at(-1);
}

/** A segment request of either stream. */
const isSegment = (url: string) => /\.(ts|m4s)(\?|$)/.test(url) && !url.includes("init-");

async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  ms = 60_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each([
  ["hls.js 1.7", "/player-hls.html", "hls", "_HLS_pathway"],
  ["dash.js 5.2", "/player-dash.html", "dash", "_DASH_pathway"],
])(
  "%s in Chromium steered by the edge (docs/reference.md §15)",
  (_name, page, format, reportParam) => {
    let origins: MediaOrigin[];
    let worker: TestWorker;
    let browser: TestBrowser;
    /** Every steering manifest the player fetched, with when. */
    const manifests: { at: number; url: string; body: string }[] = [];
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
      origins = await startMediaOrigins(STEER_POOLS, media, PAGES);
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
      browser.page.on("response", async (r) => {
        if (!r.url().includes(`/__edge/steer/${format}`)) return;
        manifests.push({ at: Date.now(), url: r.url(), body: await r.text().catch(() => "") });
      });
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
        (await browser.page.evaluate(
          () => (window as unknown as { steer: { playing: boolean } }).steer.playing,
        )) &&
        segmentsOf("fra-1").length >= 2 &&
        manifests.length >= 1
          ? true
          : undefined,
      );
      expect(manifests[0]?.body).toContain('"fra-1"');

      // fra-1 marked unhealthy: the next reload (within TTL) steers the player away.
      const unhealthyAt = Date.now();
      setTimeout(
        () =>
          console.log(
            "DEBUG",
            JSON.stringify(manifests.map((m) => [m.at - unhealthyAt, m.url, m.body])),
            JSON.stringify(
              origins.map((o) => [
                o.name,
                o.hits.slice(-8).map((h) => [h.at - unhealthyAt, h.url]),
              ]),
            ),
          ),
        25_000,
      );
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
      const state = await browser.page.evaluate(
        () => (window as unknown as { steer: { stalls: number[]; errors: string[] } }).steer,
      );
      expect(state.stalls.filter((ms) => ms > SEGMENT_SECONDS * 1000)).toEqual([]);
      // Fenced: no manifest offered use-1, and use-1 never saw a request.
      for (const m of manifests) expect(m.body).not.toContain("use-1");
      expect(origin("use-1").hits).toEqual([]);
      expect(browser.offLoopback).toEqual([]);
    }, 180_000);
  },
);
