import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { steerMedia } from "../../testkit/steer-media.js";
import { type E2eStack, eventually, POOLS, type Pool, startE2eStack } from "../helpers/stack.js";

const run = promisify(execFile);

/**
 * What the media origins send (docs/caching.md, "What origins should send"): segments never
 * change, so an hour; the VOD playlists 1 s, short enough that the second play must refetch
 * them and so shows that the edge obeys a playlist's lifetime.
 */
const SEGMENT_CC = "public, max-age=3600";
const PLAYLIST_CC = "public, max-age=1";

/** A real HTTP origin on loopback serving the ffmpeg stream, counting each path it serves. */
interface CountingOrigin {
  readonly url: string;
  readonly served: Map<string, number>;
  kill(): Promise<void>;
}

async function startCountingOrigin(pool: string, mediaDir: string): Promise<CountingOrigin> {
  const served = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/healthz" || path === "/whoami") {
      res.writeHead(200, { "content-type": "text/plain", "cache-control": "no-store" });
      res.end(pool);
      return;
    }
    const file = path.startsWith("/media/") ? join(mediaDir, normalize(path.slice(7))) : null;
    if (file === null || !file.startsWith(mediaDir)) {
      res.writeHead(404).end();
      return;
    }
    served.set(path, (served.get(path) ?? 0) + 1);
    const playlist = path.endsWith(".m3u8");
    readFile(file).then(
      (body) => {
        res.writeHead(200, {
          "content-type": playlist ? "application/vnd.apple.mpegurl" : "video/mp2t",
          "cache-control": playlist ? PLAYLIST_CC : SEGMENT_CC,
        });
        res.end(body);
      },
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    kill: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the edge answered one of the player's requests with. */
interface Answer {
  readonly path: string;
  readonly status: number;
  readonly pool: string | null;
  readonly cache: string | null;
}

/**
 * A loopback HTTP front for the player: each request goes to the Worker in workerd as a viewer
 * in `country`, and what the edge answered is noted.
 */
async function startFront(stack: E2eStack, country: string) {
  const answers: Answer[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    stack.fetch(country, path).then(
      async (r) => {
        const body = Buffer.from(await r.arrayBuffer());
        const h = r.headers;
        answers.push({
          path,
          status: r.status,
          pool: h.get("x-edge-pool"),
          cache: h.get("x-edge-cache"),
        });
        res.writeHead(r.status, { "content-type": h.get("content-type") ?? "" });
        res.end(body);
      },
      () => res.writeHead(599).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const MASTER = "/media/hls/master.m3u8";
const isSegment = (path: string) => path.endsWith(".ts");
const sum = (m: Map<string, number>, keep: (path: string) => boolean) =>
  [...m].filter(([p]) => keep(p)).reduce((n, [, c]) => n + c, 0);

let stack: E2eStack;
let origins: Map<Pool, CountingOrigin>;
let front: Awaited<ReturnType<typeof startFront>>;

beforeAll(async () => {
  const media = await steerMedia();
  stack = await startE2eStack();
  origins = new Map();
  for (const pool of POOLS) origins.set(pool, await startCountingOrigin(pool, media));
  const desired = join(tmpdir(), `cache-player-${process.pid}-${Date.now()}.yaml`);
  writeFileSync(
    desired,
    stringify({
      pools: Object.fromEntries(POOLS.map((p) => [p, { origin: origins.get(p)?.url }])),
      countries: {
        _default: { primary: "ams-1", fallbacks: ["par-1"] },
        DE: { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
      },
    }),
  );
  const applied = await stack.edgectl("apply", desired, "--yes");
  expect(applied.code, applied.stdout + applied.stderr).toBe(0);
  await eventually(
    async () => ((await stack.request("DE", "/whoami")).body === "fra-1" ? true : undefined),
    `DE served by the media origin of fra-1\n${stack.logs().slice(-3000)}`,
  );
  front = await startFront(stack, "DE");
}, 180_000);

afterAll(async () => {
  await front?.close();
  for (const o of origins?.values() ?? []) await o.kill().catch(() => {});
  await stack?.stop();
}, 60_000);

/** ffmpeg reads the whole stream through the edge, as a player would, and demuxes every packet. */
async function play(): Promise<Answer[]> {
  const from = front.answers.length;
  await run(
    "ffmpeg",
    ["-v", "error", "-i", `${front.url}${MASTER}`, "-c", "copy", "-f", "null", "-"],
    {
      timeout: 120_000,
    },
  );
  return front.answers.slice(from);
}

describe("end to end: ffmpeg plays an HLS stream through the edge twice, across a failover", () => {
  it("the second play, on another pool, fetches no segment the first one cached", async () => {
    const first = await play();
    const fra = origins.get("fra-1");
    if (!fra) throw new Error("no fra-1");
    const segments = first.filter((a) => isSegment(a.path));
    // 120 s of 2 s segments, each fetched once from fra-1, DE's first pool.
    expect(segments).toHaveLength(60);
    expect(new Set(segments.map((a) => a.path)).size).toBe(60);
    expect(first.every((a) => a.status === 200 && a.pool === "fra-1")).toBe(true);
    expect(sum(fra.served, isSegment)).toBe(60);

    // fra-1 fails: its origin dies, and with its heartbeat gone the pusher moves DE to ams-1.
    await fra.kill();
    await stack.heartbeat("fra-1")?.kill9();
    await eventually(
      async () => {
        const r = await stack.request("DE", "/whoami");
        return r.headers.get("x-edge-pool") === "ams-1" && !r.headers.has("x-edge-failover")
          ? true
          : undefined;
      },
      `DE moved to ams-1\n${stack.logs().slice(-3000)}`,
    );
    // The playlists' 1 s lifetime runs out: the second play must fetch them again.
    await sleep(1_100);
    const second = await play();

    expect(second.filter((a) => isSegment(a.path))).toHaveLength(60);
    for (const a of second) {
      expect(a.status, a.path).toBe(200);
      expect(a.pool, a.path).toBe("ams-1");
      expect(a.cache, a.path).toBe(isSegment(a.path) ? "HIT" : "MISS");
    }
    const ams = origins.get("ams-1")?.served ?? new Map<string, number>();
    const par = origins.get("par-1")?.served ?? new Map<string, number>();
    // No segment from any origin; each playlist once, as its lifetime allows, and no more.
    expect(sum(ams, isSegment) + sum(par, isSegment)).toBe(0);
    expect(Object.fromEntries(ams)).toEqual({ [MASTER]: 1, "/media/hls/v0.m3u8": 1 });
    expect(par.size).toBe(0);
  }, 240_000);
});
