import { DEFAULT_CC } from "../../../core/countries.js";
import type { UiMap } from "../ui-document.js";
import { h, swatch } from "./dom.js";
import { type DirectoryEntry, fillFor, routeFor } from "./model.js";
import type { PoolColour } from "./palette.js";

interface Row {
  readonly entry: DirectoryEntry;
  readonly li: HTMLLIElement;
  readonly button: HTMLButtonElement;
  text: string;
}

/**
 * The keyboard-friendly alternative to the map: every code a rule may name (252 rows), its pool
 * and source, filtered by the search box (code, name, pool or source).
 */
export class CountryList {
  private readonly rows: Row[];
  private query = "";

  constructor(
    list: HTMLUListElement,
    search: HTMLInputElement,
    private readonly count: HTMLElement,
    directory: readonly DirectoryEntry[],
    onFocus: (cc: string | null) => void,
  ) {
    this.rows = directory.map((entry) => {
      const button = h("button", {
        className: "row",
        attrs: { type: "button", "data-cc": entry.cc },
      });
      const li = h("li", {}, [button]);
      button.addEventListener("focus", () => onFocus(entry.cc));
      button.addEventListener("blur", () => onFocus(null));
      button.addEventListener("pointerenter", () => onFocus(entry.cc));
      button.addEventListener("pointerleave", () => onFocus(null));
      return { entry, li, button, text: entry.search };
    });
    list.replaceChildren(...this.rows.map((r) => r.li));
    search.addEventListener("input", () => {
      this.query = search.value.trim().toLowerCase();
      this.filter();
    });
  }

  render(map: UiMap, colours: ReadonlyMap<string, PoolColour>): void {
    for (const row of this.rows) {
      const { cc, name } = row.entry;
      const r = routeFor(map, cc);
      row.button.replaceChildren(
        swatch(fillFor(r, colours)),
        // `_default` is longer than a code: its row says what it is in the name column.
        h("span", { className: "mono cc", text: cc === DEFAULT_CC ? "" : cc }),
        h("span", { className: "name", text: cc === DEFAULT_CC ? `${cc} · ${name}` : name }),
        h("span", { className: "mono row-pool", text: r.route.pool }),
        r.route.degraded
          ? h("span", { className: "flag", text: "degraded", attrs: { title: r.route.degraded } })
          : "",
      );
      row.button.dataset.pool = r.route.pool;
      if (r.route.degraded) row.button.dataset.degraded = r.route.degraded;
      else delete row.button.dataset.degraded;
      row.button.setAttribute(
        "aria-label",
        `${name} (${cc}): ${r.route.pool}${r.route.degraded ? `, degraded: ${r.route.degraded}` : ""}`,
      );
      row.text = `${row.entry.search} ${r.route.pool} ${r.route.source}`.toLowerCase();
    }
    this.filter();
  }

  private filter(): void {
    let shown = 0;
    for (const row of this.rows) {
      const hit = this.query === "" || row.text.includes(this.query);
      row.li.hidden = !hit;
      if (hit) shown += 1;
    }
    this.count.textContent = this.query ? `${shown} of ${this.rows.length}` : `${this.rows.length}`;
  }
}
