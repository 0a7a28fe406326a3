import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** What an origin received, as it echoes it back. */
export interface ReceivedRequest {
  readonly origin: string;
  readonly method: string;
  /** Path and query exactly as received. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A canned answer that replaces the echo. */
export interface CannedResponse {
  readonly status: number;
  /** A list value sends the header once per entry (`Set-Cookie`). */
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string;
  /** Milliseconds the origin takes before it answers (counted in `x-origin-ms`). */
  readonly delayMs?: number;
}

/** Response header in which every origin says how long it took to answer, in ms. */
export const ORIGIN_MS_HEADER = "x-origin-ms";

/** One real HTTP origin on 127.0.0.1. */
export interface OriginServer {
  readonly name: string;
  readonly port: number;
  /** `http://127.0.0.1:PORT` (no trailing slash), usable as a pool origin. */
  readonly url: string;
  /** Requests received since start (or the last `reset`). */
  readonly requests: readonly ReceivedRequest[];
  readonly hits: number;
  /** Answer every request with this status (the echo as body); `null` restores 200. */
  failWith(status: number | null): void;
  /** Answer with `canned(request)` when it returns something, else echo. */
  respond(canned: ((req: ReceivedRequest) => CannedResponse | undefined) | null): void;
  /** Forget counted requests and restore normal behaviour. */
  reset(): void;
  /** Stops listening and drops kept-alive connections: the port is dead from now on. */
  kill(): Promise<void>;
}

/** A set of origins, by name. */
export interface Origins {
  get(name: string): OriginServer;
  readonly all: readonly OriginServer[];
  close(): Promise<void>;
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function startOne(name: string): Promise<OriginServer> {
  const requests: ReceivedRequest[] = [];
  let status: number | null = null;
  let canned: ((req: ReceivedRequest) => CannedResponse | undefined) | null = null;
  let dead = false;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const arrived = performance.now();
    const took = () => ({ [ORIGIN_MS_HEADER]: (performance.now() - arrived).toFixed(2) });
    const received: ReceivedRequest = {
      origin: name,
      method: req.method ?? "",
      url: req.url ?? "",
      headers: flatHeaders(req),
      body: await readBody(req),
    };
    requests.push(received);
    const answer = canned?.(received);
    if (answer) {
      if (answer.delayMs) await sleep(answer.delayMs);
      res.writeHead(answer.status, { ...answer.headers, ...took() });
      res.end(answer.body ?? "");
      return;
    }
    const json = JSON.stringify(received);
    res.writeHead(status ?? 200, {
      "content-type": "application/json",
      "x-origin-name": name,
      ...took(),
    });
    res.end(req.method === "HEAD" ? undefined : json);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get hits() {
      return requests.length;
    },
    failWith(s) {
      status = s;
    },
    respond(fn) {
      canned = fn;
    },
    reset() {
      requests.length = 0;
      status = null;
      canned = null;
    },
    async kill() {
      if (dead) return;
      dead = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Starts one real `node:http` origin per name on free loopback ports. */
export async function startOrigins(names: readonly string[]): Promise<Origins> {
  const all = await Promise.all(names.map(startOne));
  return {
    all,
    get(name) {
      const o = all.find((s) => s.name === name);
      if (!o) throw new Error(`no origin named ${name}`);
      return o;
    },
    async close() {
      await Promise.all(all.map((o) => o.kill()));
    },
  };
}

/**
 * The answers of an origin that gives itself away in its headers: a redirect to its own URL,
 * `Content-Location`, `Link` and `Refresh` naming it (absolute and scheme-relative), cookies
 * for its own host, `Cache-Control: public`, and the forwarding headers it received reflected
 * back as `x-seen-<name>` (so a test sees what reached it). Its body names nothing.
 */
export function selfReferencing(
  origin: OriginServer,
): (req: ReceivedRequest) => CannedResponse | undefined {
  const host = "127.0.0.1";
  const base = origin.url;
  const authority = base.replace(/^https?:/, "");
  return (req) => {
    const seen: Record<string, string> = {};
    for (const name of FORWARDING) {
      seen[`x-seen-${name}`] = req.headers[name] ?? "-";
    }
    return {
      status: req.url.startsWith("/redirect") ? 302 : 200,
      headers: {
        ...seen,
        location: `${base}/login?next=${encodeURIComponent("/x")}&back=${base}/x`,
        "content-location": `${base}/content/1.m3u8`,
        link: `<${base}/style.css>; rel=preload; as=style, <${authority}/font.woff2>; rel=preload, </rel.js>; rel=preload`,
        refresh: `5; url=${base}/refresh`,
        "set-cookie": [
          `sid=abc; Domain=${host}; Path=/; HttpOnly`,
          `pref=1; domain=.${host.toUpperCase()}; Secure`,
          "plain=2; Path=/",
        ],
        "cache-control": "public, max-age=3600",
        "cdn-cache-control": "max-age=86400",
      },
      body: `self-referencing ${origin.name}`,
    };
  };
}

/** Request headers that claim a forwarding path; `selfReferencing` reflects them. */
export const FORWARDING = [
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-port",
  "forwarded",
  "x-real-ip",
  "true-client-ip",
] as const;

/** A TCP server that accepts connections, reads what comes, and never answers. */
export interface Blackhole {
  readonly port: number;
  /** `http://127.0.0.1:PORT`, usable as a pool origin. */
  readonly url: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections still open (the client has not closed them). */
  readonly open: number;
  close(): Promise<void>;
}

/** Starts a blackhole origin on a free loopback port. */
export async function startBlackhole(): Promise<Blackhole> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createTcpServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on("data", () => undefined);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closed = false;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get open() {
      return sockets.size;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
