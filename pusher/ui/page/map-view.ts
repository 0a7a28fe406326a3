import type { UiMap } from "../ui-document.js";
import { svg } from "./dom.js";
import { fillFor, routeFor } from "./model.js";
import type { PoolColour } from "./palette.js";

/** What the map reports as the pointer or keyboard focus moves over countries. */
export interface MapEvents {
  /** `cc` is null when the pointer or focus leaves every country. */
  onHover(cc: string | null, at: { readonly x: number; readonly y: number } | null): void;
  onFocus(cc: string | null): void;
  /** A click, Enter or Space on a country: keep showing its route after the pointer leaves. */
  onSelect(cc: string): void;
}

/**
 * Paints the server-rendered SVG: fills every country with its pool's colour, lays a hatched,
 * outlined copy over degraded ones (a pattern, not colour alone), shows the dots of small
 * countries that have a rule of their own, outlines fenced countries (docs/reference.md §10),
 * and draws a ring around the highlighted country.
 */
export class MapView {
  private readonly shapes = new Map<string, SVGGraphicsElement[]>();
  private readonly dots = new Map<string, SVGCircleElement>();
  private readonly marks: SVGGElement;
  private readonly fences: SVGGElement;
  private readonly ring: SVGGElement;

  constructor(
    private readonly root: SVGSVGElement,
    events: MapEvents,
  ) {
    for (const el of root.querySelectorAll<SVGGraphicsElement>("#shapes [data-cc]")) {
      const cc = el.dataset.cc ?? "";
      const list = this.shapes.get(cc) ?? [];
      list.push(el);
      this.shapes.set(cc, list);
    }
    for (const el of root.querySelectorAll<SVGCircleElement>("#dots [data-cc]")) {
      this.dots.set(el.dataset.cc ?? "", el);
    }
    this.marks = root.querySelector<SVGGElement>("#marks") ?? root.appendChild(svg("g"));
    this.ring = root.querySelector<SVGGElement>("#ring") ?? root.appendChild(svg("g"));
    this.fences = svg("g", { id: "fence-outlines" });
    root.insertBefore(this.fences, this.ring);
    const ccOf = (t: EventTarget | null) =>
      t instanceof Element ? (t.closest<SVGElement>("[data-cc]")?.dataset.cc ?? null) : null;
    root.addEventListener("pointermove", (e) => {
      const box = root.getBoundingClientRect();
      events.onHover(ccOf(e.target), { x: e.clientX - box.left, y: e.clientY - box.top });
    });
    root.addEventListener("pointerleave", () => events.onHover(null, null));
    root.addEventListener("focusin", (e) => events.onFocus(ccOf(e.target)));
    root.addEventListener("focusout", () => events.onFocus(null));
    root.addEventListener("click", (e) => {
      const cc = ccOf(e.target);
      if (cc) events.onSelect(cc);
    });
    root.addEventListener("keydown", (e) => {
      const cc = ccOf(e.target);
      if (cc && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        events.onSelect(cc);
      }
    });
  }

  /** Codes drawn on the map (a shape or a dot). */
  codes(): string[] {
    return [...this.shapes.keys()];
  }

  /** Applies a compiled map: fills, degraded marks, dots. */
  render(map: UiMap, colours: ReadonlyMap<string, PoolColour>): void {
    const marks: SVGPathElement[] = [];
    const outlines: SVGPathElement[] = [];
    for (const [cc, els] of this.shapes) {
      const r = routeFor(map, cc);
      const fence = r.route.fence;
      if (fence !== undefined) {
        for (const el of els) {
          const d = el.getAttribute("d");
          if (d)
            outlines.push(
              svg("path", { class: "fence-outline", d, "data-cc": cc, "data-fence": fence }),
            );
        }
      }
      const fill = fillFor(r, colours);
      const dot = this.dots.get(cc);
      for (const el of dot ? [...els, dot] : els) {
        el.setAttribute("fill", fill);
        el.dataset.pool = r.route.pool;
        el.dataset.source = r.route.source;
        el.dataset.onDefault = String(r.onDefault);
        if (r.route.degraded) el.dataset.degraded = r.route.degraded;
        else delete el.dataset.degraded;
      }
      if (dot) dot.classList.toggle("on", !r.onDefault || r.route.degraded !== null);
      if (r.route.degraded) {
        for (const el of els) {
          const d = el.getAttribute("d");
          if (d) marks.push(svg("path", { class: "mark", d, "data-cc": cc }));
        }
      }
    }
    this.marks.replaceChildren(...marks);
    this.fences.replaceChildren(...outlines);
  }

  /** Rings `cc` on the map (null clears it); a small country's dot is shown while ringed. */
  highlight(cc: string | null): void {
    const ring: SVGElement[] = [];
    for (const dot of this.dots.values()) dot.classList.remove("ringed");
    if (cc) {
      for (const el of this.shapes.get(cc) ?? []) {
        const d = el.getAttribute("d");
        if (d) ring.push(svg("path", { class: "ring", d }));
      }
      const dot = this.dots.get(cc);
      if (dot) {
        dot.classList.add("ringed");
        ring.push(
          svg("circle", {
            class: "ring",
            cx: dot.getAttribute("cx") ?? "0",
            cy: dot.getAttribute("cy") ?? "0",
            r: "6",
          }),
        );
      }
    }
    this.ring.replaceChildren(...ring);
  }

  /** Whether `cc` is drawn. */
  has(cc: string): boolean {
    return this.shapes.has(cc);
  }

  /** The SVG root (for sizing the tooltip). */
  element(): SVGSVGElement {
    return this.root;
  }
}
