import { DEFAULT_CC } from "../../../core/contract/countries.js";
import type { UiMap } from "../ui-document.js";
import { h, swatch } from "./dom.js";
import { type DirectoryEntry, fillFor, routeFor } from "./model.js";
import type { PoolColour } from "./palette.js";

interface Row {
  readonly entry: DirectoryEntry;
  readonly li: HTMLLIElement;
  readonly button: HTMLButtonElement;
  readonly swatch: HTMLElement;
  readonly pool: HTMLElement;
  readonly flag: HTMLElement;
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
      const { cc, name } = entry;
      const sw = swatch("transparent");
      const pool = h("span", { className: "mono row-pool" });
      const flag = h("span", { className: "flag", text: "degraded" });
      flag.hidden = true;
      // `_default` is longer than a code: its row says what it is in the name column.
      const button = h("button", { className: "row", attrs: { type: "button", "data-cc": cc } }, [
        sw,
        h("span", { className: "mono cc", text: cc === DEFAULT_CC ? "" : cc }),
        h("span", { className: "name", text: cc === DEFAULT_CC ? `${cc} · ${name}` : name }),
        pool,
        flag,
      ]);
      const li = h("li", {}, [button]);
      button.addEventListener("focus", () => onFocus(cc));
      button.addEventListener("blur", () => onFocus(null));
      button.addEventListener("pointerenter", () => onFocus(cc));
      button.addEventListener("pointerleave", () => onFocus(null));
      return { entry, li, button, swatch: sw, pool, flag, text: entry.search };
    });
    list.replaceChildren(...this.rows.map((r) => r.li));
    search.addEventListener("input", () => {
      this.query = search.value.trim().toLowerCase();
      this.filter();
    });
  }

  /** Updates each row in place (pool, colour, degraded flag): no rows are rebuilt. */
  render(map: UiMap, colours: ReadonlyMap<string, PoolColour>): void {
    for (const row of this.rows) {
      const { cc, name } = row.entry;
      const r = routeFor(map, cc);
      row.swatch.style.background = fillFor(r, colours);
      row.pool.textContent = r.route.pool;
      row.flag.hidden = r.route.degraded === null;
      row.flag.title = r.route.degraded ?? "";
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
