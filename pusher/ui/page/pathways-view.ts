import { DEFAULT_CC } from "../../../core/contract/countries.js";
import type { UiMap } from "../ui-document.js";
import type { UiPathwayGroup, UiPathwayShare } from "../ui-pathways.js";
import { h, swatch } from "./dom.js";
import { routeFor } from "./model.js";
import type { PoolColour } from "./palette.js";

/** Most country chips one group shows before "+N more". */
const MAX_CHIPS = 14;

/** The pathway orders `cc`'s viewers get: its own route's, else `_default`'s. */
export function pathwaysFor(map: UiMap, cc: string): UiPathwayGroup | undefined {
  const key = routeFor(map, cc).onDefault ? DEFAULT_CC : cc;
  return map.pathways.find((g) => g.countries.includes(key));
}

/** The whole percent of a split's viewers one share holds; `null` when the route does not split. */
export function sharePercent(s: UiPathwayShare, g: UiPathwayGroup): number | null {
  if (g.shares.length < 2) return null;
  const total = g.shares.reduce((n, x) => n + x.weight, 0);
  return total > 0 ? Math.round((s.weight / total) * 100) : 0;
}

/** A group's orders in one line (`fra-1 → ams-1`, each share led by its percent), or why none. */
export function groupText(g: UiPathwayGroup): string {
  if (g.shares.length === 0) return "none: no pool inside its fence (503)";
  return g.shares
    .map((s) => {
      const pct = sharePercent(s, g);
      return `${pct === null ? "" : `${pct} %: `}${s.order.join(" → ")}`;
    })
    .join(" · ");
}

/**
 * Pathway orders (docs/reference.md §15): for each distinct order a steering manifest gives, the
 * pools in order (a line per share of a split, led by its weight) and the countries whose viewers
 * get it, `_default` standing for every country without a route of its own. Choosing a country
 * shows its route.
 */
export class PathwaysView {
  constructor(
    private readonly list: HTMLUListElement,
    private readonly onChoose: (cc: string) => void,
  ) {}

  render(map: UiMap, colours: ReadonlyMap<string, PoolColour>, codes: readonly string[]): void {
    const onDefault = codes.filter((cc) => cc !== DEFAULT_CC && routeFor(map, cc).onDefault);
    const rows = map.pathways.map((g) => {
      const orders = g.shares.length
        ? g.shares.map((s) => {
            const line = h("div", { className: "pathway-order" });
            const pct = sharePercent(s, g);
            if (pct !== null) line.append(h("span", { className: "pool-meta", text: `${pct} %` }));
            s.order.forEach((pool, i) => {
              if (i > 0) line.append(h("span", { className: "arrow", text: "→" }));
              line.append(
                h("span", { className: "pool-mini" }, [
                  swatch(colours.get(pool)?.colour ?? "transparent"),
                  h("span", { className: "mono", text: pool }),
                ]),
              );
            });
            return line;
          })
        : [h("div", { className: "pathway-order pathway-none", text: groupText(g) })];
      const served =
        g.countries.filter((cc) => cc !== DEFAULT_CC).length +
        (g.countries.includes(DEFAULT_CC) ? onDefault.length : 0);
      const chips = g.countries.slice(0, MAX_CHIPS).map((cc) => {
        const b = h("button", {
          className: "cc-chip",
          text: cc,
          attrs: { type: "button", "data-cc": cc },
        });
        b.addEventListener("click", () => this.onChoose(cc));
        return b;
      });
      const more = g.countries.length - chips.length;
      return h(
        "li",
        {
          className: "pathway-group",
          attrs: {
            "data-orders": g.shares.map((s) => `${s.weight}:${s.order.join(">")}`).join(" "),
            title: groupText(g),
          },
        },
        [
          ...orders,
          h("span", { className: "chips" }, [
            ...chips,
            more > 0 ? h("span", { className: "muted", text: `+${more} more` }) : "",
            h("span", {
              className: "pool-meta",
              text: `${served} ${served === 1 ? "country" : "countries"}`,
              attrs: { "data-field": "served" },
            }),
          ]),
        ],
      );
    });
    this.list.replaceChildren(...rows);
  }
}
