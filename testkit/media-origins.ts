import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** One request a media origin received. */
export interface MediaHit {
  /** Path and query as received (health checks, `/healthz`, are not kept). */
  readonly url: string;
  /** `Date.now()` at arrival. */
  readonly at: number;
}

/** A real HTTP origin on loopback serving the test streams, the players, their pages and `/healthz`. */
export interface MediaOrigin {
  readonly name: string;
  readonly url: string;
  readonly hits: readonly MediaHit[];
  /** Whether `/healthz` answers 200 (else 503); segments are served either way. */
  setHealthy(healthy: boolean): void;
  /** Stops listening and drops its connections: the pool is dead. */
  kill(): Promise<void>;
}

const TYPES: Record<string, string> = {
  ".m3u8": "application/vnd.apple.mpegurl",
  ".ts": "video/mp2t",
  ".mpd": "application/dash+xml",
  ".m4s": "video/iso.segment",
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
};

/** Files outside the media folder: the players' libraries, as npm installed them. */
const LIBS: Record<string, string> = {
  "/lib/hls.js": join(ROOT, "node_modules/hls.js/dist/hls.min.js"),
  "/lib/dash.js": join(ROOT, "node_modules/dashjs/dist/modern/umd/dash.all.min.js"),
};

async function startOne(name: string, mediaDir: string, pages: Record<string, string>) {
  const hits: MediaHit[] = [];
  let healthy = true;
  const server: Server = createServer((req, res) => {
    const url = req.url ?? "/";
    const path = url.split("?")[0] ?? "/";
    if (path === "/healthz") {
      res.writeHead(healthy ? 200 : 503, { "cache-control": "no-store" }).end();
      return;
    }
    hits.push({ url, at: Date.now() });
    const page = pages[path];
    const file =
      LIBS[path] ?? (path.startsWith("/media/") ? join(mediaDir, normalize(path.slice(7))) : null);
    const send = (body: string | Buffer, type: string) => {
      res.writeHead(200, { "content-type": type, "cache-control": "no-cache" });
      res.end(body);
    };
    if (page !== undefined) return send(page, TYPES[".html"] ?? "");
    if (file === null || (!file.startsWith(mediaDir) && !Object.values(LIBS).includes(file))) {
      res.writeHead(404).end();
      return;
    }
    readFile(file).then(
      (body) => send(body, TYPES[extname(file)] ?? "application/octet-stream"),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  let dead = false;
  return {
    name,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    setHealthy(h) {
      healthy = h;
    },
    async kill() {
      if (dead) return;
      dead = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  } satisfies MediaOrigin;
}

/** Starts one media origin per pool, each serving the same streams and pages. */
export async function startMediaOrigins(
  names: readonly string[],
  mediaDir: string,
  pages: Record<string, string>,
): Promise<MediaOrigin[]> {
  return Promise.all(names.map((n) => startOne(n, mediaDir, pages)));
}
