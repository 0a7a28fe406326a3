import { plainResponse } from "./plain-response.js";

/** Nothing in routing data may turn into a 500: whatever slipped through is a bad gateway. */
export function badGateway(err: unknown): Response {
  console.error("edge: unexpected error", err instanceof Error ? err.name : typeof err);
  return plainResponse(502, "Bad Gateway");
}
