import { constantTimeEqual } from "../debug-access.js";

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** True when `authorization` is `Bearer <token>` with the right token (compared in constant time). */
export function observeAccess(authorization: string | null, token: string): boolean {
  if (authorization === null) return false;
  const presented = BEARER.exec(authorization)?.[1];
  return presented !== undefined && constantTimeEqual(presented, token);
}
