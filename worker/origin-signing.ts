import {
  type CanonicalFrame,
  framedString,
  SIGNATURE_HEADER,
  signatureValue,
} from "../core/contract/edge-signature.js";

/**
 * Sets `X-Edge-Signature` on an origin request for `pool` (docs/reference.md §11): signed with
 * every secret in `secrets`, current first. `frame` holds exactly what the request's headers
 * carry (`X-Forwarded-Host`, `X-Edge-Country`, `X-Edge-Revision`, `X-Edge-Attr-*`).
 */
export function signOriginRequest(
  headers: Headers,
  frame: CanonicalFrame,
  pool: string,
  secrets: readonly string[],
): void {
  const t = Math.floor(Date.now() / 1000);
  headers.set(SIGNATURE_HEADER, signatureValue(framedString(frame, t, pool), t, secrets));
}
