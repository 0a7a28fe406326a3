import type { RouteShed } from "../core/contract/compiled-map.js";
import { formatShed } from "../core/contract/route-shed.js";

const texts = new WeakMap<readonly RouteShed[], string>();

/** `X-Edge-Shed` for a route's sheds (`fra-1:40`), computed once per map route. */
export function shedHeader(shed: readonly RouteShed[]): string {
  let text = texts.get(shed);
  if (text === undefined) {
    text = formatShed(shed);
    texts.set(shed, text);
  }
  return text;
}
