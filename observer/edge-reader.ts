import { safeText } from "../core/index.js";
import { type ObservationDocument, ObservationDocumentSchema } from "./observation-document.js";
import { ObserveFailure } from "./observe-failure.js";

/** Largest answer a poll reads: a row is about 300 bytes, so this is some 25,000 rows. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** Reads one window of the edge's observations, one row per (minute, country, pool). */
export type EdgeReader = (windowSeconds: number) => Promise<ObservationDocument>;

/**
 * A reader of `GET {edge}/__edge/observations?window=S&by=minute` with `Authorization: Bearer
 * {token}`, each request bounded by `timeoutMs`. Every failure is an {@link ObserveFailure};
 * none quotes the token or the answer.
 */
export function edgeReader(opts: {
  readonly edge: URL;
  readonly token: string;
  readonly timeoutMs: number;
}): EdgeReader {
  return async (windowSeconds) => {
    const url = new URL("/__edge/observations", opts.edge);
    url.searchParams.set("window", String(windowSeconds));
    url.searchParams.set("by", "minute");
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${opts.token}`, accept: "application/json" },
        redirect: "manual",
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined);
        if (res.status === 401 || res.status === 403)
          throw new ObserveFailure(
            "unauthorized",
            `${url.origin} answered ${res.status}: OBSERVE_TOKEN is not the edge's`,
          );
        throw new ObserveFailure(
          "edge-status",
          res.status === 404
            ? `${url.origin} answered 404: the edge has no OBSERVE_TOKEN, or the URL is not the edge`
            : `${url.origin} answered ${res.status}`,
        );
      }
      const length = Number(res.headers.get("content-length") ?? 0);
      if (length > MAX_ANSWER_BYTES) {
        await res.body?.cancel().catch(() => undefined);
        throw new ObserveFailure(
          "junk-response",
          `answer of ${length} bytes, over the poll's limit`,
        );
      }
      text = await res.text();
    } catch (e) {
      if (e instanceof ObserveFailure) throw e;
      const why =
        e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")
          ? `no answer within ${opts.timeoutMs} ms`
          : `${causeCode(e) ?? "no answer"}`;
      throw new ObserveFailure("edge-unreachable", `${url.origin}: ${why}`);
    }
    if (text.length > MAX_ANSWER_BYTES)
      throw new ObserveFailure("junk-response", "answer over the poll's limit");
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ObserveFailure("junk-response", "the answer is not JSON");
    }
    const parsed = ObservationDocumentSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? safeText(issue.path.join("."), 96) : "the document";
      throw new ObserveFailure(
        "junk-response",
        `the answer is not an observations document: ${where}: ${issue?.message ?? "invalid"}`,
      );
    }
    if (parsed.data.window_s !== windowSeconds)
      throw new ObserveFailure(
        "junk-response",
        `asked for window=${windowSeconds}, the answer covers ${parsed.data.window_s} s`,
      );
    return parsed.data;
  };
}

/** The system error code behind a failed fetch (`ECONNREFUSED`, …), if there is one. */
function causeCode(e: unknown): string | undefined {
  const cause = e instanceof Error ? (e.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === "string" ? cause.code : undefined;
}
