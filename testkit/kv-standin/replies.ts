import type { IncomingMessage, ServerResponse } from "node:http";
import type { KvFault } from "./faults.js";
import { envelope, type Failure } from "./responses.js";

/** One request as the stand-in saw it. */
export interface KvRequestLogEntry {
  readonly at: number;
  readonly method: string;
  readonly path: string;
  /** HTTP status sent, or 0 for a hang. */
  status: number;
  readonly fault?: KvFault;
  /** A read answered with an older value (or absent) than the key holds. */
  stale?: boolean;
}

/** Sends `body` as JSON (by default) and logs the status. */
export function send(
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

/** Sends an HTML page (the edge's, or a foreign server's). */
export function sendHtml(
  res: ServerResponse,
  entry: KvRequestLogEntry,
  status: number,
  body: string,
): void {
  send(res, entry, status, body, { "content-type": "text/html; charset=UTF-8" });
}

/** Sends an error envelope; `echoAuth` puts the request's Authorization header in it (a leak). */
export function failWith(
  echoAuth: boolean,
  req: IncomingMessage,
  res: ServerResponse,
  entry: KvRequestLogEntry,
  status: number,
  f: Failure,
  headers: Record<string, string> = {},
): void {
  const leak = echoAuth ? ` (sent ${req.headers.authorization ?? "-"})` : "";
  send(res, entry, status, envelope(false, null, [{ ...f, message: f.message + leak }]), headers);
}

/** Reads a request body; null once it passes `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > maxBytes) return null;
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}
