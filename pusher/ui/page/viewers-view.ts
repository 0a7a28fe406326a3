import type { UiMap, UiViewers } from "../ui-document.js";
import { h } from "./dom.js";

/** How a flow's p90 compares with its pool's watermarks: under low, between, at or over high. */
export type ViewerLevel = "good" | "slow" | "bad";

/** The p90 watermarks of a pool without `slow_ms` (ms): the alerts' 2 s is its high one. */
export const DEFAULT_VIEWER_MS = { low: 1000, high: 2000 } as const;

/** A flow's level against its pool's `slow_ms` (or {@link DEFAULT_VIEWER_MS}). */
export function viewerLevel(
  v: UiViewers,
  slow: { readonly low: number; readonly high: number } | undefined,
): ViewerLevel {
  const { low, high } = slow ?? DEFAULT_VIEWER_MS;
  return v.p90_ms >= high ? "bad" : v.p90_ms > low ? "slow" : "good";
}

/** The edge cache's hit ratio beside the p90 (` · 87 % hits`); nothing when the edge counted none. */
export function hitText(v: UiViewers): string {
  return v.hit_ratio === undefined ? "" : ` · ${Math.round(v.hit_ratio * 100)} % hits`;
}

/**
 * Where viewers go (docs/reference.md §8): a line per country → pool, busiest first, its bar as
 * long as its requests against the busiest's and coloured by its p90 against the pool's
 * watermarks, with the edge cache's hit ratio beside the p90 (§14); choosing one shows the
 * country. Hidden when nothing is observed.
 */
export class ViewersView {
  constructor(
    private readonly panel: HTMLElement,
    private readonly list: HTMLUListElement,
    private readonly onChoose: (cc: string) => void,
  ) {}

  render(map: UiMap, names: ReadonlyMap<string, string>): void {
    this.panel.hidden = map.viewers.length === 0;
    const slow = new Map(map.pools.map((p) => [p.name, p.slow_ms]));
    const most = Math.max(1, ...map.viewers.map((v) => v.requests));
    const rows = map.viewers.map((v) => {
      const level = viewerLevel(v, slow.get(v.pool));
      const bar = h("span", { className: `viewers-bar level-${level}` });
      bar.style.width = `${Math.max(2, Math.round((v.requests / most) * 100))}%`;
      const meta = `p90 ${v.p90_ms} ms${hitText(v)} · ${v.requests} requests · ${(v.error_ratio * 100).toFixed(1)} % errors`;
      const button = h(
        "button",
        {
          className: "viewers-flow",
          attrs: { type: "button", title: `${names.get(v.country) ?? v.country}: ${meta}` },
        },
        [
          h("span", { className: "viewers-route mono", text: `${v.country} → ${v.pool}` }),
          h("span", { className: "viewers-track" }, [bar]),
          h("span", { className: "pool-meta", text: meta }),
        ],
      );
      button.addEventListener("click", () => this.onChoose(v.country));
      return h(
        "li",
        {
          attrs: {
            "data-country": v.country,
            "data-pool": v.pool,
            "data-level": level,
            "data-p90": String(v.p90_ms),
            "data-weight": bar.style.width,
            ...(v.hit_ratio !== undefined ? { "data-hit": String(v.hit_ratio) } : {}),
          },
        },
        [button],
      );
    });
    this.list.replaceChildren(...rows);
  }
}
