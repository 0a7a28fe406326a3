import { EDGE_HEADERS } from "./edge-headers.js";

const utf8 = new TextEncoder();

/** workerd's extension of Web Crypto (typed here too for the Node-side type check of this file). */
const subtle = crypto.subtle as SubtleCrypto & {
  timingSafeEqual(a: ArrayBufferView | ArrayBuffer, b: ArrayBufferView | ArrayBuffer): boolean;
};

/**
 * Compares two strings in time that does not depend on where they differ: workerd's
 * `crypto.subtle.timingSafeEqual` over their UTF-8 bytes. It takes equal lengths only, so a length
 * mismatch still runs one comparison (of `a` with itself) before it answers false.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  if (x.byteLength !== y.byteLength) return !subtle.timingSafeEqual(x, x);
  return subtle.timingSafeEqual(x, y);
}

/** True when debug features are on and the request carries the right `X-Edge-Debug-Token`. */
export function debugAccess(headers: Headers, debugToken: string | null): boolean {
  if (debugToken === null) return false;
  const presented = headers.get(EDGE_HEADERS.debugToken);
  return presented !== null && constantTimeEqual(presented, debugToken);
}
