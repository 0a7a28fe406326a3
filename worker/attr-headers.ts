import type { Route } from "../core/contract/compiled-map.js";
import { attrLines } from "../core/contract/edge-signature.js";

/** One market attribute as the origin receives it. */
export interface AttrHeader {
  /** `X-Edge-Attr-{name}`, as set on the origin request. */
  readonly name: string;
  /** Lower-case, as the origin reads it and the signature covers it. */
  readonly lower: string;
  /** As `Headers` holds it (leading and trailing spaces trimmed). */
  readonly value: string;
}

const NONE: readonly AttrHeader[] = [];
const made = new WeakMap<object, readonly AttrHeader[]>();

/**
 * A route's `attrs` as `X-Edge-Attr-*` request headers (docs/reference.md §11), in name order,
 * worked out once per map route: `Headers` itself normalizes each value, so what the signature
 * covers is exactly what the origin receives.
 */
export function attrHeaders(attrs: Route["attrs"]): readonly AttrHeader[] {
  if (!attrs) return NONE;
  let list = made.get(attrs);
  if (list === undefined) {
    const h = new Headers();
    for (const name of Object.keys(attrs)) h.set(`X-Edge-Attr-${name}`, attrs[name] ?? "");
    list = Object.keys(attrs)
      .sort()
      .map((name) => {
        const header = `X-Edge-Attr-${name}`;
        return { name: header, lower: header.toLowerCase(), value: h.get(header) ?? "" };
      });
    made.set(attrs, list);
  }
  return list;
}

const lines = new WeakMap<readonly AttrHeader[], string>();

/** The signature's attribute lines (`attrLines`) of an {@link attrHeaders} list, once per list. */
export function signedAttrLines(list: readonly AttrHeader[]): string {
  let text = lines.get(list);
  if (text === undefined) {
    text = attrLines(list.map((a) => [a.lower, a.value] as const));
    lines.set(list, text);
  }
  return text;
}
