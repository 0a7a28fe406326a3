import type { UiMap } from "../ui-document.js";
import { h } from "./dom.js";

/**
 * The fences legend (docs/reference.md §10): each fence's name, regions, floor and how many
 * countries it holds; the panel is hidden when there is no fence. Fenced countries are outlined
 * on the map in the same dashed line as the legend's key.
 */
export class FenceLegendView {
  constructor(
    private readonly panel: HTMLElement,
    private readonly list: HTMLUListElement,
  ) {}

  render(map: UiMap): void {
    this.panel.hidden = map.fences.length === 0;
    const rows = map.fences.map((f) =>
      h("li", { className: "fence", attrs: { "data-fence": f.name } }, [
        h("span", { className: "fence-key", attrs: { "aria-hidden": "true" } }),
        h("span", { className: "pool-main" }, [
          h("span", { className: "mono", text: f.name }),
          h("span", {
            className: "pool-meta",
            text: `${f.regions.join(", ")} · floor ${f.floor}`,
          }),
        ]),
        h("span", {
          className: "served",
          text: String(f.countries),
          attrs: { "aria-label": `${f.countries} countries`, title: `${f.countries} countries` },
        }),
      ]),
    );
    this.list.replaceChildren(...rows);
  }
}
