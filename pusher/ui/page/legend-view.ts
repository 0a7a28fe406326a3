import type { UiMap, UiPool } from "../ui-document.js";
import { h, swatch } from "./dom.js";
import type { PoolColour } from "./palette.js";

const HEALTH_TEXT: Readonly<Record<UiPool["health"], string>> = {
  healthy: "healthy",
  draining: "draining",
  unhealthy: "unhealthy",
  missing: "missing",
};

const HEALTH_HINT: Readonly<Record<UiPool["health"], string>> = {
  healthy: "takes traffic",
  draining: "publishes draining: takes no traffic",
  unhealthy: "publishes unhealthy: takes no traffic",
  missing: "no health/ key (lease expired or never registered): takes no traffic",
};

/**
 * The pool legend: colour, name, region, health (`healthy`, `draining`, `unhealthy`, `missing`)
 * and how many countries each serves now; the default route's pool and the floor are flagged.
 */
export class LegendView {
  constructor(private readonly list: HTMLUListElement) {}

  render(
    map: UiMap,
    colours: ReadonlyMap<string, PoolColour>,
    counts: ReadonlyMap<string, number>,
  ): void {
    const rows = map.pools.map((p) => {
      const c = colours.get(p.name);
      const served = counts.get(p.name) ?? 0;
      const tags: string[] = [];
      if (map.default.pool === p.name) tags.push("default");
      if (map.floor_pool === p.name) tags.push("floor");
      if (!p.defined) tags.push("undefined");
      if (p.shed !== undefined) tags.push("slow");
      const name = h("span", { className: "pool-name" }, [
        h("span", { className: "mono", text: p.name }),
        ...tags.map((t) =>
          h("span", {
            className: `tag tag-${t}`,
            text: t === "slow" ? `slow: sheds ${p.shed ?? 0} %` : t,
          }),
        ),
      ]);
      const meta = [
        p.region ?? "",
        p.p90_ms !== undefined ? `p90 ${p.p90_ms} ms` : "",
        p.slow_ms ? `slow ${p.slow_ms.low}/${p.slow_ms.high} ms` : "",
        p.checkers ? `${p.checkers.healthy}/${p.checkers.live} checkers` : "",
      ].filter(Boolean);
      const li = h(
        "li",
        {
          className: "pool",
          attrs: {
            "data-pool": p.name,
            "data-health": p.health,
            "data-shed": p.shed !== undefined ? String(p.shed) : "",
            "data-colour": c?.colour ?? "",
            "data-muted": c?.muted ?? "",
            title: HEALTH_HINT[p.health],
          },
        },
        [
          swatch(c?.colour ?? "transparent"),
          h("span", { className: "pool-main" }, [
            name,
            h("span", { className: "pool-meta", text: meta.join(" · ") }),
          ]),
          h("span", { className: `health health-${p.health}`, text: HEALTH_TEXT[p.health] }),
          h("span", {
            className: "served",
            text: String(served),
            attrs: { "aria-label": `${served} countries`, title: `${served} countries` },
          }),
        ],
      );
      return li;
    });
    this.list.replaceChildren(...rows);
  }
}
