import type { TestBrowser } from "./browser.js";
import { SEGMENT_SECONDS } from "./steer-media.js";

/** The two players the steering tests and bench drive, with their page and report parameter. */
export const STEER_PLAYERS = [
  { name: "hls.js 1.7", page: "/player-hls.html", format: "hls", report: "_HLS_pathway" },
  { name: "dash.js 5.2", page: "/player-dash.html", format: "dash", report: "_DASH_pathway" },
] as const;

/** One of {@link STEER_PLAYERS}. */
export type SteerPlayer = (typeof STEER_PLAYERS)[number];

/** What each page keeps: stalls after playback began, and the player's errors. */
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

/** The players' pages, served by every media origin: each buffers two segments ahead. */
export const PLAYER_PAGES: Record<string, string> = {
  "/player-hls.html": `<!doctype html><video id="v" muted autoplay playsinline></video>
<script src="/lib/hls.js"></script><script>${PAGE_COMMON}
const hls = new Hls({ maxBufferLength: ${2 * SEGMENT_SECONDS}, maxMaxBufferLength: ${2 * SEGMENT_SECONDS} });
hls.on(Hls.Events.ERROR, (_e, d) => steer.errors.push(d.details + (d.fatal ? " fatal" : "")));
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
export function reportedOn(url: string, param: string): string | undefined {
  const raw = new URL(url).searchParams.get(param) ?? "";
  return raw.replace(/^"|"$/g, "").split(",").at(-1);
}

/**
 * A media segment request (not an init segment) of either stream, or of `format`'s alone: the
 * media origins serve each format's stream under `/media/FORMAT/` (see {@link PLAYER_PAGES}).
 * `url` is a path as an origin received it, or a whole URL.
 */
export function isSegment(url: string, format?: SteerPlayer["format"]): boolean {
  if (!/\.(ts|m4s)(\?|$)/.test(url) || url.includes("init-")) return false;
  return (
    format === undefined || new URL(url, "http://origin").pathname.startsWith(`/media/${format}/`)
  );
}

/** One steering manifest a player fetched. */
export interface FetchedManifest {
  /** `Date.now()` when its answer arrived. */
  readonly at: number;
  readonly url: string;
  readonly status: number;
  readonly body: string;
}

/** What a page's player reported of itself. */
export interface PlayerState {
  readonly playing: boolean;
  /** Stalls after playback began, ms each. */
  readonly stalls: readonly number[];
  readonly errors: readonly string[];
}

/** Records every steering manifest the browser's page fetches (`/__edge/steer/FORMAT`). */
export function recordManifests(browser: TestBrowser, format: string): FetchedManifest[] {
  const manifests: FetchedManifest[] = [];
  browser.page.on("response", async (r) => {
    if (!r.url().includes(`/__edge/steer/${format}`)) return;
    const body = await r.text().catch(() => "");
    manifests.push({ at: Date.now(), url: r.url(), status: r.status(), body });
  });
  return manifests;
}

/** The page's player state (see {@link PLAYER_PAGES}). */
export function playerState(browser: TestBrowser): Promise<PlayerState> {
  return browser.page.evaluate(() => (window as unknown as { steer: PlayerState }).steer);
}

/** Polls `fn` every 100 ms until it returns a value, or throws naming `what` after `ms`. */
export async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
