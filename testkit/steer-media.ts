import { execFile } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Seconds of the test stream by default, and of each of its segments. */
export const MEDIA_SECONDS = 120;
export const SEGMENT_SECONDS = 2;

/** Where a stream is cached (ignored by git); a change of the recipe changes the folder. */
function mediaDir(seconds: number): string {
  return join(ROOT, ".tmp", `steer-media-v1-${seconds}s-${SEGMENT_SECONDS}s`);
}

/** The same small H.264 picture for both formats: 192×108, 10 fps, a keyframe per segment. */
function videoArgs(seconds: number): string[] {
  const gop = String(10 * SEGMENT_SECONDS);
  return [
    "-hide_banner",
    "-loglevel",
    "error",
    "-f",
    "lavfi",
    "-i",
    "testsrc2=size=192x108:rate=10",
    "-t",
    String(seconds),
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-g",
    gop,
    "-keyint_min",
    gop,
    "-sc_threshold",
    "0",
    "-pix_fmt",
    "yuv420p",
    "-b:v",
    "150k",
  ];
}

/**
 * Makes (once, then cached under `.tmp/`) an HLS stream (`hls/master.m3u8`, a multivariant
 * playlist over `hls/v0.m3u8` and MPEG-TS segments) and a DASH one (`dash/stream.mpd`, fMP4
 * segments) of `seconds` with ffmpeg, and returns their folder.
 */
export async function steerMedia(seconds = MEDIA_SECONDS): Promise<string> {
  const dir = mediaDir(seconds);
  if (existsSync(join(dir, "hls", "master.m3u8")) && existsSync(join(dir, "dash", "stream.mpd")))
    return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "hls"), { recursive: true });
  mkdirSync(join(dir, "dash"), { recursive: true });
  const seg = String(SEGMENT_SECONDS);
  const hls = [
    ...videoArgs(seconds),
    ...["-f", "hls", "-hls_time", seg, "-hls_playlist_type", "vod"],
    ...["-hls_segment_filename", join(dir, "hls", "seg_%03d.ts")],
    ...["-master_pl_name", "master.m3u8", join(dir, "hls", "v0.m3u8")],
  ];
  const dash = [
    ...videoArgs(seconds),
    ...["-f", "dash", "-seg_duration", seg, "-use_template", "1", "-use_timeline", "0"],
    join(dir, "dash", "stream.mpd"),
  ];
  try {
    await Promise.all([run("ffmpeg", hls), run("ffmpeg", dash)]);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`ffmpeg could not make the test streams (apt-get install ffmpeg): ${err}`);
  }
  return dir;
}
