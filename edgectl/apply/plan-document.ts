import type { KeyChange } from "./plan-diff.js";

/** A key change as `-o json` shows it (`KeyChangeShape`): the key relative to the prefix. */
export function changeDocument(c: KeyChange) {
  return {
    kind: c.kind,
    key: c.rel,
    ...(c.before !== undefined ? { before: c.before } : {}),
    ...(c.after !== undefined ? { after: c.after } : {}),
  };
}
