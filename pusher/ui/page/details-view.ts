import type { UiMap } from "../ui-document.js";
import { h, swatch } from "./dom.js";
import { type CountryRoute, degradedText, poolInfo, routeFor } from "./model.js";
import type { PoolColour } from "./palette.js";
import { groupText, pathwaysFor } from "./pathways-view.js";

/** Everything the route panel needs to describe one country. */
export interface DetailsContext {
  readonly map: UiMap;
  readonly colours: ReadonlyMap<string, PoolColour>;
  readonly names: ReadonlyMap<string, string>;
}

function poolChip(pool: string, ctx: DetailsContext): HTMLElement {
  const c = ctx.colours.get(pool);
  const health = poolInfo(ctx.map, pool).health;
  return h("span", { className: "pool-chip", attrs: { "data-pool": pool } }, [
    swatch(c?.colour ?? "transparent"),
    h("span", { className: "mono", text: pool }),
    h("span", { className: `health-dot health-${health}`, attrs: { title: health } }),
  ]);
}

function row(label: string, value: Node | string, key: string): HTMLElement {
  return h("div", { className: "drow", attrs: { "data-field": key } }, [
    h("dt", { text: label }),
    h("dd", {}, [value]),
  ]);
}

/** The canary side of `cc`'s route, as the Worker picks it (docs/reference.md §13), or "none". */
function canaryText(map: UiMap, cc: string, r: CountryRoute): string {
  const c = map.canary;
  if (!c) return "none";
  const own = c.routes.find((x) => x.country === cc);
  const side = own ?? (r.onDefault ? c.routes.find((x) => x.country === "_default") : undefined);
  return side ? `${c.share} % → ${side.canary} (${c.id})` : "none";
}

/** The steering pathway orders `cc`'s viewers get (docs/reference.md §15). */
function pathwayText(map: UiMap, cc: string): string {
  const g = pathwaysFor(map, cc);
  return g ? groupText(g) : "none";
}

function describeSource(r: CountryRoute): string {
  return r.onDefault ? `${r.route.source} (no rule of its own)` : r.route.source;
}

/**
 * The route panel: pool, chain, source, degraded reason, weights, shed, fence, the canary side
 * and the steering pathway orders of one country.
 */
export class DetailsView {
  constructor(private readonly root: HTMLElement) {}

  show(cc: string | null, ctx: DetailsContext | null): void {
    if (!ctx) {
      this.root.replaceChildren(h("p", { className: "muted", text: "Waiting for the pusher…" }));
      return;
    }
    const target = cc ?? "_default";
    const r = routeFor(ctx.map, target);
    const name = ctx.names.get(target) ?? target;
    this.root.dataset.cc = target;
    const chain = h("span", { className: "chain" });
    r.route.chain.forEach((p, i) => {
      if (i > 0) chain.append(h("span", { className: "arrow", text: "→" }));
      chain.append(poolChip(p, ctx));
    });
    const weights = r.route.weights
      ? r.route.weights.map((w) => `${w.pool} ${w.weight}`).join(" · ")
      : "none";
    const title = h("div", { className: "details-title" }, [
      h("span", { className: "details-name", text: name }),
      h("span", { className: "mono details-cc", text: target }),
      r.route.degraded ? h("span", { className: "chip chip-bad", text: "degraded" }) : "",
      r.onDefault ? h("span", { className: "chip", text: "on _default" }) : "",
      cc
        ? ""
        : h("span", {
            className: "muted hint",
            text: "Hover, focus or click a country to see its route.",
          }),
    ]);
    this.root.replaceChildren(
      title,
      h("dl", { className: "details-grid" }, [
        row("Pool", poolChip(r.route.pool, ctx), "pool"),
        row("Chain", chain, "chain"),
        row("Source", h("span", { className: "mono", text: describeSource(r) }), "source"),
        row("Degraded", degradedText(r.route.degraded), "degraded"),
        row("Weights", weights, "weights"),
        row(
          "Shed",
          r.route.shed ? r.route.shed.map((x) => `${x.pool} ${x.share} %`).join(" · ") : "none",
          "shed",
        ),
        row("Fence", r.route.fence ?? "none", "fence"),
        row("Canary", canaryText(ctx.map, target, r), "canary"),
        row("Pathways", pathwayText(ctx.map, target), "pathways"),
      ]),
    );
  }
}

/** The small label that follows the pointer over the map. */
export class Tooltip {
  constructor(private readonly el: HTMLElement) {}

  show(text: string, at: { readonly x: number; readonly y: number }, width: number): void {
    this.el.textContent = text;
    this.el.hidden = false;
    const left = Math.min(at.x + 14, width - this.el.offsetWidth - 4);
    this.el.style.left = `${Math.max(4, left)}px`;
    this.el.style.top = `${Math.max(4, at.y - 34)}px`;
  }

  hide(): void {
    this.el.hidden = true;
  }
}
