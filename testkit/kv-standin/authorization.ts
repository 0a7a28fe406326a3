import type { Failure } from "./responses.js";

/** What the API makes of a request's `Authorization` header. */
export type AuthOutcome =
  | { readonly ok: true; readonly token: string }
  | { readonly ok: false; readonly status: number; readonly failure: Failure };

/** The shape of an API token: URL-safe characters, as Cloudflare issues them. */
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/;

/**
 * Checks the header as Cloudflare's API gateway does: none at all is 400 `9106 Missing X-Auth-Key,
 * X-Auth-Email or Authorization headers`; one that is not `Bearer <token>` is 400 `6003 Invalid
 * request headers` with `error_chain` `6111 Invalid format for Authorization header`; a
 * well-formed token that is not valid is 403 `10000 Authentication error`.
 */
export function checkAuthorization(
  header: string | undefined,
  tokens: ReadonlySet<string>,
): AuthOutcome {
  if (header === undefined || header === "") {
    return {
      ok: false,
      status: 400,
      failure: { code: 9106, message: "Missing X-Auth-Key, X-Auth-Email or Authorization headers" },
    };
  }
  const m = BEARER.exec(header);
  if (!m?.[1]) {
    return {
      ok: false,
      status: 400,
      failure: {
        code: 6003,
        message: "Invalid request headers",
        error_chain: [{ code: 6111, message: "Invalid format for Authorization header" }],
      },
    };
  }
  if (!tokens.has(m[1])) {
    return { ok: false, status: 403, failure: { code: 10000, message: "Authentication error" } };
  }
  return { ok: true, token: m[1] };
}
