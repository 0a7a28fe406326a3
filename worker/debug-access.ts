import { EDGE_HEADERS } from "./edge-headers.js";

/** Compares two strings in time that depends only on their lengths, not on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const len = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < len; i++) {
    diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  }
  return diff === 0;
}

/** True when debug features are on and the request carries the right `X-Edge-Debug-Token`. */
export function debugAccess(headers: Headers, debugToken: string | null): boolean {
  if (debugToken === null) return false;
  const presented = headers.get(EDGE_HEADERS.debugToken);
  return presented !== null && constantTimeEqual(presented, debugToken);
}
