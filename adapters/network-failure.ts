/**
 * What stopped a network call, read from its whole `cause` chain: `fetch` throws `fetch failed`
 * and puts the socket's error one or two levels down (`connect ECONNREFUSED …`,
 * `getaddrinfo ENOTFOUND …`, an OpenSSL record error), where one level of `cause` does not reach.
 */
export type NetworkFailureKind =
  | "refused"
  | "dns"
  | "tls"
  | "reset"
  | "unreachable"
  | "timeout"
  | "other";

/** A failed network call: its kind and one line that says what happened. */
export interface NetworkFailure {
  readonly kind: NetworkFailureKind;
  readonly text: string;
}

interface ErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly reason?: unknown;
  readonly cause?: unknown;
  readonly errors?: unknown;
}

/** Chains deeper than this are cut: a cycle or a pathological wrapper must not hang a log line. */
const MAX_CHAIN = 12;

/** Wrappers that name no cause of their own. */
const GENERIC = new Set(["fetch failed", "terminated", "other side closed"]);

/**
 * The errors of `e`'s chain, outermost first: each `cause`, and the `errors` of an
 * AggregateError (a host name that resolves to several addresses fails once per address).
 */
export function causeChain(e: unknown): readonly ErrorLike[] {
  const out: ErrorLike[] = [];
  const seen = new Set<unknown>();
  const visit = (x: unknown) => {
    if (typeof x !== "object" || x === null || seen.has(x) || out.length >= MAX_CHAIN) return;
    seen.add(x);
    const err = x as ErrorLike;
    out.push(err);
    if (Array.isArray(err.errors)) for (const inner of err.errors) visit(inner);
    visit(err.cause);
  };
  visit(e);
  return out;
}

const LABEL: Record<NetworkFailureKind, string> = {
  refused: "connection refused",
  dns: "DNS lookup failed",
  tls: "TLS handshake failed",
  reset: "connection reset",
  unreachable: "host unreachable",
  timeout: "timed out",
  other: "network error",
};

function kindOf(code: string, name: string): NetworkFailureKind | null {
  if (code === "ECONNREFUSED") return "refused";
  if (code === "ENOTFOUND" || code.startsWith("EAI_")) return "dns";
  if (
    code.startsWith("ERR_SSL_") ||
    code.startsWith("ERR_TLS_") ||
    code.startsWith("CERT_") ||
    /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)
  ) {
    return "tls";
  }
  if (code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET") return "reset";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EADDRNOTAVAIL") {
    return "unreachable";
  }
  if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT" || name === "TimeoutError") {
    return "timeout";
  }
  return null;
}

/** One error's own words: OpenSSL's `reason` rather than its record dump. */
function wordsOf(err: ErrorLike): string {
  if (typeof err.reason === "string" && typeof err.code === "string") {
    if (err.code.startsWith("ERR_SSL_")) return err.reason;
  }
  return typeof err.message === "string" ? err.message.trim() : "";
}

/**
 * Reads a failed network call's whole cause chain: the deepest error that names a known kind
 * decides it, and the text gives that kind and the chain's own messages, e.g. `connection
 * refused: connect ECONNREFUSED 127.0.0.1:9`, `DNS lookup failed: getaddrinfo ENOTFOUND kv.invalid`,
 * `TLS handshake failed (a plain-HTTP port?): wrong version number`. Never throws.
 */
export function networkFailure(e: unknown): NetworkFailure {
  const chain = causeChain(e);
  let kind: NetworkFailureKind = "other";
  let wrongVersion = false;
  for (const err of chain) {
    const code = typeof err.code === "string" ? err.code : "";
    const name = typeof err.name === "string" ? err.name : "";
    kind = kindOf(code, name) ?? kind;
    if (code === "ERR_SSL_WRONG_VERSION_NUMBER") wrongVersion = true;
  }
  // The innermost errors say the most (several: one per address of a host name); an outer
  // wrapper only names the call, and speaks when nothing under it does.
  const leaves = chain.filter((err) => err.cause === undefined && !Array.isArray(err.errors));
  const wordsIn = (errs: readonly ErrorLike[]) => [
    ...new Set(errs.map(wordsOf).filter((w) => w && !GENERIC.has(w))),
  ];
  const words = wordsIn(leaves).length > 0 ? wordsIn(leaves) : wordsIn(chain).slice(0, 1);
  const detail = words.join("; ");
  const label = wrongVersion ? `${LABEL.tls} (a plain-HTTP port?)` : LABEL[kind];
  if (kind === "other" && detail) return { kind, text: detail };
  return { kind, text: detail ? `${label}: ${detail}` : label };
}
