/**
 * A local imitation of Cloudflare's Workers KV REST API (v4) for tests, on 127.0.0.1.
 *
 * Documented behaviours it reproduces (developers.cloudflare.com):
 * - v4 envelope `{success, errors:[{code,message}], messages, result}`; auth by
 *   `Authorization: Bearer <token>`; a wrong token gets 403 `10000 Authentication error`,
 *   a missing header 400 `9106`.
 * - `PUT /accounts/{a}/storage/kv/namespaces/{n}/bulk`: array of {key, value[, base64]}, at most
 *   10,000 pairs and under 100 MB (kv/api/write-key-value-pairs); keys 1..512 bytes, values up to
 *   25 MiB (kv/platform/limits); answers `result: {successful_key_count, unsuccessful_keys}`
 *   (KV changelog 2024-11-14).
 * - `GET …/values/{key}`: raw bytes, or 404 `10009 get: 'key not found'`; unknown namespace 404
 *   `10013`.
 * - 1 write per second to the same key, else 429 (kv/platform/limits, "Limits to KV writes to the
 *   same key"). The REST error code for it is not documented; this stand-in uses 10100.
 * - Account budget 1,200 requests / 5 minutes; past it every call is blocked with 429
 *   `971 Please wait and consider throttling your request speed` and `Retry-After` seconds
 *   (fundamentals/api/reference/limits).
 *
 * Fault injection (seeded, reproducible): a failure ratio drawing from 429 + Retry-After, 500,
 * hangs (no answer until the client gives up) and 200 bulk answers with `unsuccessful_keys`.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Kinds of injected failure. */
export type KvFault = "rate-limited" | "server-error" | "hang" | "unsuccessful-keys";

/** Random failures: `ratio` of requests fail, the kind drawn by `weights`. */
export interface KvFaultOptions {
  readonly ratio: number;
  readonly weights?: Partial<Record<KvFault, number>>;
  /** `Retry-After` on injected 429s, in seconds (default 1). */
  readonly retryAfterSeconds?: number;
  /** Send `Retry-After` as an HTTP-date instead of seconds. */
  readonly retryAfterAsDate?: boolean;
}

/** One request as the stand-in saw it. */
export interface KvRequestLogEntry {
  readonly at: number;
  readonly method: string;
  readonly path: string;
  /** HTTP status sent, or 0 for a hang. */
  status: number;
  readonly fault?: KvFault;
}

export interface KvStandinOptions {
  readonly token?: string;
  readonly accountId?: string;
  readonly namespaceId?: string;
  /** Seed for the fault RNG (default 1). */
  readonly seed?: number;
  readonly faults?: KvFaultOptions;
  /** Same-key writes within 1 s: "429" (default), "unsuccessful-keys", or "off". */
  readonly perKeyWriteLimit?: "429" | "unsuccessful-keys" | "off";
  /** Account budget (default 1,200 per 5 minutes). */
  readonly accountLimit?: { readonly limit: number; readonly windowMs: number };
  /** Clock for the log, the per-key limit and the account budget (default Date.now). */
  readonly now?: () => number;
  /** Put the request's Authorization header into error messages (a leaky upstream). */
  readonly echoAuthorizationInErrors?: boolean;
}

export interface KvStandin {
  /** API base for `CF_API_BASE_URL`, e.g. `http://127.0.0.1:PORT/client/v4`. */
  readonly url: string;
  readonly token: string;
  readonly accountId: string;
  readonly namespaceId: string;
  /** Stored values of the namespace. */
  readonly values: Map<string, string>;
  readonly requests: KvRequestLogEntry[];
  setFaults(f: KvFaultOptions | undefined): void;
  /** Forces the next `count` requests to fail with `kind` (before random faults). */
  failNext(kind: KvFault, count?: number): void;
  close(): Promise<void>;
}

const MAX_PAIRS = 10_000;
const MAX_BODY_BYTES = 100 * 1000 * 1000;
const MAX_KEY_BYTES = 512;
const MAX_VALUE_BYTES = 25 * 1024 * 1024;

/** mulberry32: a small seeded PRNG so fault sequences are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Failure {
  readonly code: number;
  readonly message: string;
}

function envelope(success: boolean, result: unknown, errors: Failure[] = []): string {
  return JSON.stringify({ success, errors, messages: [], result });
}

/** Starts the stand-in on a free 127.0.0.1 port. */
export async function startKvStandin(opts: KvStandinOptions = {}): Promise<KvStandin> {
  const token = opts.token ?? "standin-token-0123456789abcdef";
  const accountId = opts.accountId ?? "0123456789abcdef0123456789abcdef";
  const namespaceId = opts.namespaceId ?? "fedcba9876543210fedcba9876543210";
  const now = opts.now ?? Date.now;
  const rand = seededRandom(opts.seed ?? 1);
  const perKey = opts.perKeyWriteLimit ?? "429";
  const account = opts.accountLimit ?? { limit: 1_200, windowMs: 5 * 60_000 };
  let faults = opts.faults;
  const forced: KvFault[] = [];
  const values = new Map<string, string>();
  const lastWrite = new Map<string, number>();
  const requests: KvRequestLogEntry[] = [];
  const accountStamps: number[] = [];
  let blockedUntil = 0;

  const base = `/client/v4/accounts/${accountId}/storage/kv/namespaces/`;

  function send(
    res: ServerResponse,
    entry: KvRequestLogEntry,
    status: number,
    body: string,
    headers: Record<string, string> = {},
  ): void {
    entry.status = status;
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body);
  }

  function fail(
    req: IncomingMessage,
    res: ServerResponse,
    entry: KvRequestLogEntry,
    status: number,
    f: Failure,
    headers: Record<string, string> = {},
  ): void {
    const leak = opts.echoAuthorizationInErrors
      ? ` (sent ${req.headers.authorization ?? "-"})`
      : "";
    send(
      res,
      entry,
      status,
      envelope(false, null, [{ code: f.code, message: f.message + leak }]),
      headers,
    );
  }

  function retryAfter(seconds: number, asDate: boolean): string {
    return asDate ? new Date(now() + seconds * 1000).toUTCString() : String(seconds);
  }

  function drawFault(isBulk: boolean): KvFault | undefined {
    const next = forced.shift();
    if (next) return next;
    if (!faults || faults.ratio <= 0 || rand() >= faults.ratio) return undefined;
    const w = faults.weights ?? {
      "rate-limited": 1,
      "server-error": 1,
      hang: 1,
      "unsuccessful-keys": 1,
    };
    const kinds = (Object.keys(w) as KvFault[]).filter(
      (k) => (w[k] ?? 0) > 0 && (isBulk || k !== "unsuccessful-keys"),
    );
    const total = kinds.reduce((s, k) => s + (w[k] ?? 0), 0);
    if (total <= 0) return undefined;
    let r = rand() * total;
    for (const k of kinds) {
      r -= w[k] ?? 0;
      if (r < 0) return k;
    }
    return kinds[kinds.length - 1];
  }

  async function readBody(req: IncomingMessage): Promise<Buffer | null> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY_BYTES) return null;
      chunks.push(c as Buffer);
    }
    return Buffer.concat(chunks);
  }

  async function bulkWrite(
    req: IncomingMessage,
    res: ServerResponse,
    entry: KvRequestLogEntry,
    fault: KvFault | undefined,
  ): Promise<void> {
    const body = await readBody(req);
    if (body === null) {
      return fail(req, res, entry, 413, {
        code: 10011,
        message: "request body too large (max 100 MB)",
      });
    }
    let pairs: unknown;
    try {
      pairs = JSON.parse(body.toString("utf8"));
    } catch {
      return fail(req, res, entry, 400, { code: 10026, message: "could not parse request body" });
    }
    if (!Array.isArray(pairs)) {
      return fail(req, res, entry, 400, { code: 10026, message: "body must be an array" });
    }
    if (pairs.length > MAX_PAIRS) {
      return fail(req, res, entry, 400, {
        code: 10026,
        message: `at most ${MAX_PAIRS} pairs per request`,
      });
    }
    const writes: { key: string; value: string }[] = [];
    for (const p of pairs as unknown[]) {
      const { key, value, base64 } = (p ?? {}) as {
        key?: unknown;
        value?: unknown;
        base64?: unknown;
      };
      if (
        typeof key !== "string" ||
        key === "" ||
        key === "." ||
        key === ".." ||
        Buffer.byteLength(key) > MAX_KEY_BYTES
      ) {
        return fail(req, res, entry, 400, { code: 10019, message: "invalid key" });
      }
      if (typeof value !== "string") {
        return fail(req, res, entry, 400, {
          code: 10026,
          message: `value for "${key}" must be a string`,
        });
      }
      const text = base64 === true ? Buffer.from(value, "base64").toString("utf8") : value;
      if (Buffer.byteLength(text) > MAX_VALUE_BYTES) {
        return fail(req, res, entry, 413, {
          code: 10011,
          message: `value for "${key}" exceeds 25 MiB`,
        });
      }
      writes.push({ key, value: text });
    }
    const t = now();
    const hot = writes.filter(
      (w) => t - (lastWrite.get(w.key) ?? Number.NEGATIVE_INFINITY) < 1_000,
    );
    if (hot.length > 0 && perKey === "429") {
      return fail(
        req,
        res,
        entry,
        429,
        { code: 10100, message: "KV PUT failed: 429 Too Many Requests" },
        { "retry-after": "1" },
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

  const sockets = new Set<import("node:net").Socket>();
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

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    entry: KvRequestLogEntry,
    path: string,
  ): Promise<void> {
    // The account budget is enforced before anything else, as Cloudflare's API gateway does.
    const t = now();
    while (accountStamps.length > 0 && (accountStamps[0] ?? 0) <= t - account.windowMs)
      accountStamps.shift();
    if (t < blockedUntil || accountStamps.length >= account.limit) {
      if (t >= blockedUntil) blockedUntil = t + account.windowMs;
      const secs = Math.ceil((blockedUntil - t) / 1000);
      return fail(
        req,
        res,
        entry,
        429,
        { code: 971, message: "Please wait and consider throttling your request speed" },
        { "retry-after": String(secs) },
      );
    }
    accountStamps.push(t);

    const auth = req.headers.authorization;
    if (!auth) {
      return fail(req, res, entry, 400, {
        code: 9106,
        message: "Missing X-Auth-Key, X-Auth-Email or Authorization headers",
      });
    }
    if (auth !== `Bearer ${token}`) {
      return fail(req, res, entry, 403, { code: 10000, message: "Authentication error" });
    }
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
    const fault = drawFault(isBulk);
    if (fault) (entry as { fault?: KvFault }).fault = fault;
    if (fault === "hang") {
      entry.status = 0;
      return; // never answer; close() destroys the socket
    }
    if (fault === "server-error") {
      return fail(req, res, entry, 500, { code: 10001, message: "Internal server error" });
    }
    if (fault === "rate-limited") {
      const secs = faults?.retryAfterSeconds ?? 1;
      return fail(
        req,
        res,
        entry,
        429,
        { code: 971, message: "Please wait and consider throttling your request speed" },
        { "retry-after": retryAfter(secs, faults?.retryAfterAsDate ?? false) },
      );
    }
    if (isBulk) return bulkWrite(req, res, entry, fault);
    if (tail.startsWith("/values/")) {
      const key = decodeURIComponent(tail.slice("/values/".length));
      if (req.method === "GET") {
        const v = values.get(key);
        if (v === undefined) {
          return fail(req, res, entry, 404, { code: 10009, message: "get: 'key not found'" });
        }
        entry.status = 200;
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(v);
        return;
      }
      if (req.method === "PUT") {
        const body = (await readBody(req)) ?? Buffer.alloc(0);
        values.set(key, body.toString("utf8"));
        lastWrite.set(key, now());
        return send(res, entry, 200, envelope(true, {}));
      }
    }
    return fail(req, res, entry, 405, { code: 10405, message: "method not allowed" });
  }

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/client/v4`,
    token,
    accountId,
    namespaceId,
    values,
    requests,
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
