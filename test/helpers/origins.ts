import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

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
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? "");
      return;
    }
    const json = JSON.stringify(received);
    res.writeHead(status ?? 200, {
      "content-type": "application/json",
      "x-origin-name": name,
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
