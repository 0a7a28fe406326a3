import { SIGNATURE_HEADER, type SignedFields, signEdgeRequest } from "../core/edge-signature.js";

/** What a request's signatures share on every attempt: all the signed fields but `t` and the pool. */
export type RequestSigningFields = Omit<SignedFields, "t" | "pool">;

/**
 * Sets `X-Edge-Signature` on an origin request for `pool` (docs/reference.md §11): signed with
 * every secret in `secrets`, current first. `fields` hold exactly what the request's headers
 * carry (`X-Forwarded-Host`, `X-Edge-Country`, `X-Edge-Revision`, `X-Edge-Attr-*`).
 */
export async function signOriginRequest(
  headers: Headers,
  fields: RequestSigningFields,
  pool: string,
  secrets: readonly string[],
): Promise<void> {
  const value = await signEdgeRequest(
    { ...fields, t: Math.floor(Date.now() / 1000), pool },
    secrets,
  );
  headers.set(SIGNATURE_HEADER, value);
}
