import { safeText } from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";

/** The most URLs the edge takes in one purge request (worker/cache/purge-route.ts). */
export const PURGE_BATCH = 100;

/** What the location that answered removed for one URL. */
export interface PurgedUrl {
  readonly url: string;
  /** The location that answered (Cloudflare's colo code; `null` under workerd locally). */
  readonly location: string | null;
  /** Copies removed there (one per market the map keys on); 0: it held none. */
  readonly removed: number;
}

function isPurgeAnswer(
  v: unknown,
): v is { purged: { url: string; removed: number }[]; location: string | null } {
  if (typeof v !== "object" || v === null) return false;
  const a = v as Record<string, unknown>;
  return (
    Array.isArray(a.purged) &&
    a.purged.every(
      (p: unknown) =>
        typeof p === "object" &&
        p !== null &&
        typeof (p as Record<string, unknown>).url === "string" &&
        typeof (p as Record<string, unknown>).removed === "number",
    ) &&
    (a.location === null || typeof a.location === "string")
  );
}

/**
 * Sends `urls` to `POST {edge}/__edge/purge` with `Authorization: Bearer {token}`, in batches
 * of {@link PURGE_BATCH}. Every failure is a `CliError` that names the edge and the status,
 * never the token; the edge's text is escaped before it can reach a terminal.
 */
export async function purgeAtEdge(opts: {
  readonly edge: URL;
  readonly token: string;
  readonly urls: readonly string[];
  readonly timeoutMs: number;
}): Promise<PurgedUrl[]> {
  const endpoint = new URL("/__edge/purge", opts.edge);
  const out: PurgedUrl[] = [];
  for (let i = 0; i < opts.urls.length; i += PURGE_BATCH) {
    const batch = opts.urls.slice(i, i + PURGE_BATCH);
    let res: Response;
    let text: string;
    try {
      res = await fetch(endpoint, {
        method: "POST",
        headers: { authorization: `Bearer ${opts.token}`, "content-type": "application/json" },
        body: JSON.stringify({ urls: batch }),
        redirect: "manual",
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      text = await res.text();
    } catch (e) {
      const why =
        e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")
          ? `no answer within ${opts.timeoutMs} ms`
          : "no answer";
      throw new CliError("unreachable", `${endpoint.origin}: ${why}`);
    }
    if (res.status === 404) {
      throw new CliError(
        "invalid-input",
        `${endpoint.origin} answered 404: the edge has no PURGE_TOKEN, the token is not the edge's, or the URL is not the edge`,
      );
    }
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: reported below with the status
    }
    if (res.status !== 200 || !isPurgeAnswer(body)) {
      const detail =
        typeof body === "object" && body !== null && "detail" in body
          ? `: ${safeText(String((body as { detail: unknown }).detail), 200)}`
          : "";
      throw new CliError(
        res.status === 400 ? "invalid-input" : "unreachable",
        `${endpoint.origin} answered ${res.status}${detail}`,
      );
    }
    const location = body.location === null ? null : safeText(body.location, 16);
    for (const p of body.purged) out.push({ url: p.url, location, removed: p.removed });
  }
  return out;
}
