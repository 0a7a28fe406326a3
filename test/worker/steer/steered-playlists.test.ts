import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Origins, startOrigins } from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { putSteerWorld, STEER_POOLS } from "./steer-world.js";

const HLS = "application/vnd.apple.mpegurl";
const DASH = "application/dash+xml";

const MULTIVARIANT = [
  "#EXTM3U",
  "#EXT-X-VERSION:6",
  '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="en",URI="audio.m3u8"',
  '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="aud"',
  "v0.m3u8",
  '#EXT-X-STREAM-INF:BANDWIDTH=1600000,RESOLUTION=1280x720,AUDIO="aud"',
  "v1.m3u8",
  '#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="iframes.m3u8"',
  "",
].join("\n");

const MEDIA = [
  "#EXTM3U",
  "#EXT-X-VERSION:6",
  "#EXT-X-TARGETDURATION:2",
  "#EXTINF:2.0,",
  "seg0.ts",
  "#EXT-X-ENDLIST",
  "",
].join("\n");

const MPD = `<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S" minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
  <Period id="0">
    <AdaptationSet contentType="video" mimeType="video/mp4">
      <SegmentTemplate media="chunk-$RepresentationID$-$Number$.m4s" initialization="init-$RepresentationID$.m4s" duration="2" timescale="1" startNumber="1"/>
      <Representation id="0" bandwidth="800000" codecs="avc1.64001e" width="640" height="360"/>
    </AdaptationSet>
  </Period>
</MPD>
`;

describe("playlists and MPDs gain steering in passing with STEER=on (docs/reference.md §15)", () => {
  let origins: Origins;
  let worker: TestWorker;
  let plain: TestWorker;

  /** Every origin answers `path` with `body` as `type`. */
  const serve = (path: string, body: string, type: string, extra: Record<string, string> = {}) => {
    for (const o of origins.all)
      o.respond((r) =>
        r.url.split("?")[0] === path
          ? { status: 200, headers: { "content-type": type, etag: '"v1"', ...extra }, body }
          : undefined,
      );
  };

  beforeAll(async () => {
    origins = await startOrigins(STEER_POOLS);
    [worker, plain] = await Promise.all([
      startWorker({ FLOOR_POOL: "use-1", STEER: "on" }),
      startWorker({ FLOOR_POOL: "use-1" }),
    ]);
  });
  afterAll(async () => {
    await worker?.dispose();
    await plain?.dispose();
    await origins?.close();
  });
  beforeEach(async () => {
    for (const o of origins.all) o.reset();
    await Promise.all([putSteerWorld(worker, origins), putSteerWorld(plain, origins)]);
  });

  it("a multivariant playlist gains EXT-X-CONTENT-STEERING and PATHWAY-IDs of the viewer's first pool", async () => {
    serve("/live/master.m3u8", MULTIVARIANT, HLS);
    const res = await worker.dispatch("/live/master.m3u8", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBeNull();
    const lines = res.body.split("\n");
    expect(lines[0]).toBe("#EXTM3U");
    expect(lines[1]).toBe(
      '#EXT-X-CONTENT-STEERING:SERVER-URI="/__edge/steer/hls?base=fra-1",PATHWAY-ID="fra-1"',
    );
    expect(lines.filter((l) => l.startsWith("#EXT-X-STREAM-INF:"))).toEqual([
      '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="aud",PATHWAY-ID="fra-1"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1600000,RESOLUTION=1280x720,AUDIO="aud",PATHWAY-ID="fra-1"',
    ]);
    expect(res.body).toContain(
      '#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="iframes.m3u8",PATHWAY-ID="fra-1"',
    );
    // Everything else is the origin's, line for line.
    const back = res.body
      .split("\n")
      .filter((l) => !l.startsWith("#EXT-X-CONTENT-STEERING"))
      .map((l) => l.replace(',PATHWAY-ID="fra-1"', ""))
      .join("\n");
    expect(back).toBe(MULTIVARIANT);
  });

  it("a fenced viewer's playlist names a pool inside its fence", async () => {
    serve("/live/master.m3u8", MULTIVARIANT, HLS);
    const fr = await worker.dispatch("/live/master.m3u8", { country: "FR" });
    expect(fr.body).toContain('PATHWAY-ID="par-1"');
    expect(fr.body).not.toContain("use-1");
  });

  it("without STEER=on, the same playlist passes through unchanged", async () => {
    serve("/live/master.m3u8", MULTIVARIANT, HLS);
    const res = await plain.dispatch("/live/master.m3u8", { country: "DE" });
    expect(res.body).toBe(MULTIVARIANT);
    expect(res.headers.get("etag")).toBe('"v1"');
  });

  it.each([
    ["a media playlist", "/live/v0.m3u8", MEDIA, HLS],
    [
      "a playlist that already steers",
      "/live/own.m3u8",
      MULTIVARIANT.replace(
        "#EXT-X-VERSION:6",
        '#EXT-X-VERSION:6\n#EXT-X-CONTENT-STEERING:SERVER-URI="https://steer.example/s"',
      ),
      HLS,
    ],
    ["a malformed playlist", "/live/bad.m3u8", "<html>oops</html>\n#EXT-X-STREAM-INF:\nx", HLS],
    ["a segment", "/live/seg0.ts", "\u0047binary-ish", "video/mp2t"],
    [
      "an MPD that already steers",
      "/vod/own.mpd",
      MPD.replace(
        '<Period id="0">',
        '<ContentSteering>https://s.example/</ContentSteering>\n  <Period id="0">',
      ),
      DASH,
    ],
    [
      "an MPD whose origin set its own BaseURL",
      "/vod/base.mpd",
      MPD.replace(
        '<Period id="0">',
        '<BaseURL>https://cdn.example/vod/</BaseURL>\n  <Period id="0">',
      ),
      DASH,
    ],
    ["a malformed MPD", "/vod/bad.mpd", '<MPD type="static"', DASH],
  ])("%s passes through byte for byte", async (_name, path, body, type) => {
    serve(path, body, type);
    const res = await worker.dispatch(path, { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.body).toBe(body);
    expect(res.headers.get("etag")).toBe('"v1"');
  });

  it("a 10 MB playlist passes through unchanged, with or without Content-Length", async () => {
    const huge = `${MULTIVARIANT}${'#EXT-X-SESSION-DATA:DATA-ID="x",VALUE="y"\n'.repeat(250_000)}`;
    expect(huge.length).toBeGreaterThan(10_000_000);
    serve("/live/huge.m3u8", huge, HLS);
    const res = await worker.dispatch("/live/huge.m3u8", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(huge.length);
    expect(res.body === huge).toBe(true);
    // Chunked: no Content-Length to go by, so the bound is met while reading.
    serve("/live/huge2.m3u8", huge, HLS, { "transfer-encoding": "chunked" });
    const chunked = await worker.dispatch("/live/huge2.m3u8", { country: "DE" });
    expect(chunked.body === huge).toBe(true);
  });

  it("an MPD gains ContentSteering and one BaseURL per pool of the viewer's chain", async () => {
    serve("/vod/stream.mpd", MPD, DASH);
    const res = await worker.dispatch("/vod/stream.mpd", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.body).toContain(
      '<ContentSteering defaultServiceLocation="fra-1" queryBeforeStart="false">/__edge/steer/dash</ContentSteering>',
    );
    const bases = [...res.body.matchAll(/<BaseURL serviceLocation="([^"]+)">([^<]*)<\/BaseURL>/g)];
    expect(bases.map((m) => [m[1], m[2]])).toEqual([
      ["fra-1", "http://edge.test/vod/?edge_pathway=fra-1"],
      ["ams-1", "http://edge.test/vod/?edge_pathway=ams-1"],
      ["par-1", "http://edge.test/vod/?edge_pathway=par-1"],
    ]);
    expect(res.body.indexOf("<ContentSteering")).toBeLessThan(res.body.indexOf("<Period"));
    expect(res.body.replace(/\n {2}<(ContentSteering|BaseURL)[^\n]*/g, "")).toBe(MPD);
  });

  it("a playlist fetched with edge_pathway is served by that pool and names it", async () => {
    serve("/live/master.m3u8", MULTIVARIANT, HLS);
    const res = await worker.dispatch("/live/master.m3u8?edge_pathway=ams-1", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(res.body).toContain('PATHWAY-ID="ams-1"');
    expect(origins.get("ams-1").requests[0]?.url).toBe("/live/master.m3u8");
  });
});
