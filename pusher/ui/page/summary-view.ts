import { DEFAULT_CC } from "../../../core/contract/countries.js";
import type { UiMap } from "../ui-document.js";
import { h } from "./dom.js";
import { routeFor } from "./model.js";

/** Most country chips one summary line shows before "+N more". */
const MAX_CHIPS = 18;

/**
 * The at-a-glance column beside the route panel: which countries are degraded or overridden now,
 * how many have rules of their own, and when the map was compiled. Each country chip is a button:
 * hovering or focusing it shows that country's route.
 */
export class SummaryView {
  constructor(
    private readonly root: HTMLElement,
    private readonly onFocus: (cc: string | null) => void,
  ) {}

  private chips(codes: readonly string[], kind: string): HTMLElement {
    if (codes.length === 0) return h("span", { className: "muted", text: "none" });
    const shown = codes.slice(0, MAX_CHIPS).map((cc) => {
      const b = h("button", {
        className: `cc-chip cc-chip-${kind}`,
        text: cc,
        attrs: { type: "button", "data-cc": cc },
      });
      b.addEventListener("focus", () => this.onFocus(cc));
      b.addEventListener("blur", () => this.onFocus(null));
      b.addEventListener("pointerenter", () => this.onFocus(cc));
      b.addEventListener("pointerleave", () => this.onFocus(null));
      return b;
    });
    const more = codes.length - shown.length;
    return h("span", { className: "chips" }, [
      ...shown,
      more > 0 ? h("span", { className: "muted", text: `+${more} more` }) : "",
    ]);
  }

  render(map: UiMap, codes: readonly string[]): void {
    const degraded: string[] = [];
    const overridden: string[] = [];
    let own = 0;
    let onDefault = 0;
    for (const cc of codes) {
      if (cc === DEFAULT_CC) continue;
      const r = routeFor(map, cc);
      if (r.route.degraded) degraded.push(cc);
      if (r.route.source.startsWith("override/")) overridden.push(cc);
      if (r.onDefault) onDefault += 1;
      else own += 1;
    }
    if (map.default.degraded) degraded.unshift(DEFAULT_CC);
    const line = (label: string, value: Node | string, field: string) =>
      h("div", { className: "srow", attrs: { "data-field": field } }, [
        h("dt", { text: label }),
        h("dd", {}, [value]),
      ]);
    this.root.replaceChildren(
      h("h2", { text: "Now" }),
      h("dl", { className: "summary-grid" }, [
        line("Degraded", this.chips(degraded, "bad"), "degraded"),
        line("Overrides", this.chips(overridden, "override"), "overrides"),
        line("Own rules", `${own} countries`, "own"),
        line("On _default", `${onDefault} countries → ${map.default.pool}`, "on-default"),
        line(
          "Compiled",
          h("span", {
            className: "mono",
            // UTC, as the pusher's logs and /status timestamps are.
            text: `${map.compiled_at.slice(11, 19)} UTC · rev ${map.rev}`,
            attrs: { title: map.compiled_at },
          }),
          "compiled",
        ),
      ]),
    );
  }
}
