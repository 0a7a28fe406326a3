import { describe, expect, it } from "vitest";
import { steerHlsPlaylist } from "../../../worker/steer/hls-steering-tags.js";

const TAGS = { serverUri: "/__edge/steer/hls?base=fra-1", pathway: "fra-1" };
const STEERING =
  '#EXT-X-CONTENT-STEERING:SERVER-URI="/__edge/steer/hls?base=fra-1",PATHWAY-ID="fra-1"';

describe("steerHlsPlaylist (docs/reference.md §15)", () => {
  it("keeps CRLF line endings and a byte order mark", () => {
    const text = "\uFEFF#EXTM3U\r\n#EXT-X-STREAM-INF:BANDWIDTH=1\r\nv.m3u8\r\n";
    expect(steerHlsPlaylist(text, TAGS)).toBe(
      `\uFEFF#EXTM3U\r\n${STEERING}\r\n#EXT-X-STREAM-INF:BANDWIDTH=1,PATHWAY-ID="fra-1"\r\nv.m3u8\r\n`,
    );
  });

  it.each([
    ["no #EXTM3U first", "#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n"],
    ["a media playlist", "#EXTM3U\n#EXTINF:2,\ns.ts\n"],
    ["no variant stream", "#EXTM3U\n#EXT-X-VERSION:3\n"],
    ["its own PATHWAY-IDs", '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,PATHWAY-ID="cdn-a"\nv.m3u8\n'],
    [
      "its own steering",
      '#EXTM3U\n#EXT-X-CONTENT-STEERING:SERVER-URI="s"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv\n',
    ],
    ["empty", ""],
  ])("leaves %s alone", (_name, text) => {
    expect(steerHlsPlaylist(text, TAGS)).toBeNull();
  });
});
