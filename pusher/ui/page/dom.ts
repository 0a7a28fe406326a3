/** Options of `h`: a class, text content and attributes. Text is always set as text, never HTML. */
export interface ElementOptions {
  readonly className?: string;
  readonly text?: string;
  readonly attrs?: Readonly<Record<string, string>>;
}

/** Creates an HTML element; children are nodes or text. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  o: ElementOptions = {},
  children: readonly (Node | string)[] = [],
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (o.className) el.className = o.className;
  if (o.text !== undefined) el.textContent = o.text;
  for (const [k, v] of Object.entries(o.attrs ?? {})) el.setAttribute(k, v);
  for (const c of children) el.append(c);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** Creates an SVG element with attributes. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Readonly<Record<string, string>> = {},
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

/** The element with `id`, or an error naming it (the page's HTML is the pusher's own). */
export function byId<T extends HTMLElement | SVGElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`routing map: element #${id} is missing`);
  return el as unknown as T;
}

/** A small colour swatch. */
export function swatch(colour: string, className = "swatch"): HTMLElement {
  const el = h("i", { className, attrs: { "aria-hidden": "true" } });
  el.style.background = colour;
  return el;
}
