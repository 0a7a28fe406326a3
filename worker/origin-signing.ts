import {
  type CanonicalFrame,
  framedString,
  SIGNATURE_HEADER,
  signatureValue,
} from "../core/contract/edge-signature.js";

/**
 * `headers` with `X-Edge-Signature` set for a request to `pool` (docs/reference.md §11): signed
 * with every secret in `secrets`, current first. `frame` holds exactly what the request's headers
 * carry (`X-Forwarded-Host`, `X-Edge-Country`, `X-Edge-Revision`, `X-Edge-Attr-*`).
 */
export async function signOriginRequest(
  headers: Headers,
  frame: CanonicalFrame,
  pool: string,
  secrets: readonly string[],
): Promise<Headers> {
  const t = Math.floor(Date.now() / 1000);
  headers.set(SIGNATURE_HEADER, await signatureValue(framedString(frame, t, pool), t, secrets));
  return headers;
}
