import { ATTR_HEADER_PREFIX, SIGNATURE_HEADER, signEdgeRequest } from "../core/edge-signature.js";
import { EDGE_HEADERS } from "./edge-headers.js";

/**
 * Sets `X-Edge-Signature` on an origin request whose `X-Edge-*` and `X-Forwarded-Host` headers
 * are final (docs/reference.md §11): signed with every secret in `secrets`, current first.
 */
export async function signOriginRequest(
  headers: Headers,
  method: string,
  pathAndQuery: string,
  secrets: readonly string[],
): Promise<void> {
  const attrs: [string, string][] = [];
  for (const [name, value] of headers)
    if (name.startsWith(ATTR_HEADER_PREFIX)) attrs.push([name, value]);
  const value = await signEdgeRequest(
    {
      t: Math.floor(Date.now() / 1000),
      method,
      host: headers.get("X-Forwarded-Host") ?? "",
      pathAndQuery,
      pool: headers.get(EDGE_HEADERS.pool) ?? "",
      country: headers.get(EDGE_HEADERS.country) ?? "",
      revision: headers.get(EDGE_HEADERS.revision) ?? "",
      attrs,
    },
    secrets,
  );
  headers.set(SIGNATURE_HEADER, value);
}
