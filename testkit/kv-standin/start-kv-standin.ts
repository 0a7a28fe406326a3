import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { AccountBudget } from "./account-budget.js";
import { checkAuthorization } from "./authorization.js";
import { MAX_BODY_BYTES, parseBulkBody } from "./bulk-body.js";
import { drawFault, type KvFault } from "./faults.js";
import { failWith, type KvRequestLogEntry, readBody, send, sendHtml } from "./replies.js";
import {
  EDGE_STATUSES,
  edgeErrorPage,
  envelope,
  type Failure,
  foreignNotFoundPage,
} from "./responses.js";
import { seededRandom } from "./seeded-random.js";
import type { KvStandin, KvStandinOptions } from "./standin-options.js";
import { staleRead, VersionedValues } from "./versioned-values.js";

export type { KvRequestLogEntry, KvStandin, KvStandinOptions };

/** Starts the stand-in of Cloudflare's Workers KV REST API on a free 127.0.0.1 port. */
export async function startKvStandin(opts: KvStandinOptions = {}): Promise<KvStandin> {
  const token = opts.token ?? "standin-token-0123456789abcdef";
  const tokens = new Set([token, ...(opts.tokens ?? [])]);
  const accountId = opts.accountId ?? "0123456789abcdef0123456789abcdef";
  const namespaceId = opts.namespaceId ?? "fedcba9876543210fedcba9876543210";
  const now = opts.now ?? Date.now;
  const seed = opts.seed ?? 1;
  const rand = seededRandom(seed);
  // Its own sequence, so turning staleness on does not change which requests fail.
  const staleRand = seededRandom(seed ^ 0x5eed5);
  const stale = opts.staleReads;
  const perKey = opts.perKeyWriteLimit ?? "429";
  const limit = opts.accountLimit ?? { limit: 1_200, windowMs: 5 * 60_000 };
  const budget = new AccountBudget(limit.limit, limit.windowMs);
  let faults = opts.faults;
  const forced: KvFault[] = [];
  const values = new VersionedValues();
  values.configure(now, stale?.windowMs ?? 0);
  const lastWrite = new Map<string, number>();
  const requests: KvRequestLogEntry[] = [];
  const base = `/client/v4/accounts/${accountId}/storage/kv/namespaces/`;
  let rays = 0;

  const fail = (
    req: IncomingMessage,
    res: ServerResponse,
    entry: KvRequestLogEntry,
    status: number,
    f: Failure,
    headers: Record<string, string> = {},
  ): void => failWith(opts.echoAuthorizationInErrors === true, req, res, entry, status, f, headers);

  const rateLimited = (secs: string): [number, Failure, Record<string, string>] => [
    429,
    { code: 971, message: "Please wait and consider throttling your request speed" },
    { "retry-after": secs },
  ];

  async function bulkWrite(
    req: IncomingMessage,
    res: ServerResponse,
    entry: KvRequestLogEntry,
    fault: KvFault | undefined,
  ): Promise<void> {
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === null) {
      return fail(req, res, entry, 413, {
        code: 10011,
        message: "request body too large (max 100 MB)",
      });
    }
    const parsed = parseBulkBody(body);
    if (!parsed.ok) return fail(req, res, entry, parsed.status, parsed.failure);
    const { writes } = parsed;
    const t = now();
    const hot = writes.filter(
      (w) => t - (lastWrite.get(w.key) ?? Number.NEGATIVE_INFINITY) < 1_000,
    );
    if (hot.length > 0 && perKey === "429") {
      // Undocumented REST code for the per-key limit; 10100 here.
      return fail(
        req,
        res,
        entry,
        429,
        { code: 10100, message: "KV PUT failed: 429 Too Many Requests" },
        {
          "retry-after": "1",
        },
      );
    }
    const rejected = new Set(perKey === "unsuccessful-keys" ? hot.map((w) => w.key) : []);
    if (fault === "unsuccessful-keys" && writes.length > 0) {
      for (const w of writes) if (rand() < 0.5) rejected.add(w.key);
      if (rejected.size === 0) rejected.add(writes[Math.floor(rand() * writes.length)]!.key);
    }
    for (const w of writes) {
      if (rejected.has(w.key)) continue;
      values.set(w.key, w.value);
      lastWrite.set(w.key, t);
    }
    send(
      res,
      entry,
      200,
      envelope(true, {
        successful_key_count: writes.length - rejected.size,
        unsuccessful_keys: [...rejected],
      }),
    );
  }

  function readValue(
    res: ServerResponse,
    entry: KvRequestLogEntry,
    key: string,
    req: IncomingMessage,
  ): void {
    const current = values.get(key);
    const v = stale ? staleRead(values.candidates(key, now()), staleRand, stale) : current;
    if (v !== current) entry.stale = true;
    if (v === undefined) {
      fail(req, res, entry, 404, { code: 10009, message: "get: 'key not found'" });
      return;
    }
    entry.status = 200;
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end(v);
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    entry: KvRequestLogEntry,
    path: string,
  ) {
    const auth = checkAuthorization(req.headers.authorization, tokens);
    if (!auth.ok) return fail(req, res, entry, auth.status, auth.failure);
    // Counted per user once the token says who it is, across every token of that user.
    const blocked = budget.take(now(), auth.token);
    if (blocked > 0) return fail(req, res, entry, ...rateLimited(String(blocked)));
    if (!path.startsWith(base)) {
      return fail(req, res, entry, 404, { code: 7003, message: `Could not route to ${path}` });
    }
    const rest = path.slice(base.length);
    const slash = rest.indexOf("/");
    const ns = slash < 0 ? rest : rest.slice(0, slash);
    const tail = slash < 0 ? "" : rest.slice(slash);
    if (ns !== namespaceId) {
      return fail(req, res, entry, 404, { code: 10013, message: "namespace not found" });
    }
    const isBulk = req.method === "PUT" && tail === "/bulk";
    const fault = forced.shift() ?? drawFault(faults, rand, isBulk);
    if (fault) (entry as { fault?: KvFault }).fault = fault;
    switch (fault) {
      case "hang":
        entry.status = 0;
        return; // never answer; close() destroys the socket
      case "server-error":
        return fail(req, res, entry, 500, { code: 10001, message: "Internal server error" });
      case "edge-error": {
        const status = EDGE_STATUSES[Math.floor(rand() * EDGE_STATUSES.length)] ?? 502;
        rays += 1;
        const ray = `${(0x8a3f000000000000n + BigInt(rays)).toString(16)}-FRA`;
        return sendHtml(res, entry, status, edgeErrorPage(status, "api.cloudflare.com", ray));
      }
      case "foreign-404":
        return sendHtml(res, entry, 404, foreignNotFoundPage(path));
      case "rate-limited": {
        const secs = faults?.retryAfterSeconds ?? 1;
        const value = faults?.retryAfterAsDate
          ? new Date(now() + secs * 1000).toUTCString()
          : String(secs);
        return fail(req, res, entry, ...rateLimited(value));
      }
      default:
        break;
    }
    if (isBulk) return bulkWrite(req, res, entry, fault);
    if (tail.startsWith("/values/")) {
      const key = decodeURIComponent(tail.slice("/values/".length));
      if (req.method === "GET") return readValue(res, entry, key, req);
      if (req.method === "PUT") {
        const body = (await readBody(req, MAX_BODY_BYTES)) ?? Buffer.alloc(0);
        values.set(key, body.toString("utf8"));
        lastWrite.set(key, now());
        return send(res, entry, 200, envelope(true, {}));
      }
    }
    return fail(req, res, entry, 405, { code: 10405, message: "method not allowed" });
  }

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const entry: KvRequestLogEntry = { at: now(), method: req.method ?? "?", path, status: 0 };
    requests.push(entry);
    void handle(req, res, entry, path).catch(() => {
      if (!res.headersSent)
        send(res, entry, 500, envelope(false, null, [{ code: 10001, message: "internal" }]));
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/client/v4`,
    token,
    accountId,
    namespaceId,
    seed,
    values,
    requests,
    budget,
    staleReads: stale,
    setFaults(f) {
      faults = f;
    },
    failNext(kind, count = 1) {
      for (let i = 0; i < count; i++) forced.push(kind);
    },
    async close() {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
