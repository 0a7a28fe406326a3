import type { CanaryReport, CanarySideFigures } from "../../../core/index.js";
import type { UiCanary } from "../ui-canary.js";
import { h, swatch } from "./dom.js";
import type { PoolColour } from "./palette.js";

/** What a canary is doing as the page words it: judged and held at its share, or frozen. */
export type CanaryState = "running" | "frozen";

/** The page's word for the report's state: a canary that is judged is `running`. */
export function canaryState(report: CanaryReport): CanaryState {
  return report.state === "frozen" ? "frozen" : "running";
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;
const ms = (v: number | null) => (v === null ? "–" : `${v} ms`);

/** The gates' limits for the canary side, from stable's figures (docs/reference.md §13). */
export function canaryLimits(
  gates: UiCanary["gates"],
  stable: CanarySideFigures | null,
): { readonly errors: string; readonly p90: string; readonly samples: string } {
  return {
    samples: `≥ ${gates.min_samples}`,
    errors: stable ? `≤ ${percent(stable.error_ratio + gates.errors_pt / 100)}` : "–",
    p90:
      stable?.p90_ms != null
        ? `≤ ${Math.round(stable.p90_ms * gates.p90_factor + gates.p90_plus_ms)} ms`
        : "–",
  };
}

/** Seconds as the page shows a canary's age: `45 s`, `4 min 10 s`. */
function duration(s: number): string {
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
}

function progress(r: CanaryReport): string {
  const clock = `${duration(r.age_s)} of --for ${duration(r.for_s)}`;
  if (r.frozen !== null) return `${r.frozen}: keeps its share, never promoted without a judgement`;
  const since = r.passing_since ? ` since ${r.passing_since.slice(11, 19)} UTC` : "";
  return `judged ${r.verdict ?? "not yet"}${since} · ${clock}`;
}

/**
 * The running canary (docs/reference.md §13): its id, state (`running` or `frozen`) and share,
 * each route it changes with both sides (stable pool → canary pool, by country), and the gates'
 * figures per side as the observer last judged them, with the limits the canary side must keep.
 * Its routes come from the compiled map, its state and figures from `/status`; choosing a route
 * shows the country. Hidden when no canary runs.
 */
export class CanaryView {
  constructor(
    private readonly panel: HTMLElement,
    private readonly body: HTMLElement,
    private readonly onChoose: (cc: string) => void,
  ) {}

  render(
    canary: UiCanary | null,
    report: CanaryReport | null,
    colours: ReadonlyMap<string, PoolColour>,
  ): void {
    const id = report?.id ?? canary?.id;
    this.panel.hidden = id === undefined;
    if (id === undefined) {
      this.body.replaceChildren();
      return;
    }
    // The map and /status are sent apart: routes of another canary are not shown as this one's.
    const routes = canary?.id === id ? canary.routes : [];
    const state = report ? canaryState(report) : null;
    this.panel.dataset.state = state ?? "";
    const head = h("div", { className: "canary-head" }, [
      h("span", { className: "mono", text: id, attrs: { "data-field": "id" } }),
      state
        ? h("span", {
            className: `chip canary-state canary-${state}`,
            text: state,
            attrs: { "data-field": "state" },
          })
        : "",
      h("span", {
        text: `${report?.share ?? canary?.share ?? "–"} % of its routes' viewers`,
        attrs: { "data-field": "share" },
      }),
    ]);
    const chip = (pool: string) =>
      h("span", { className: "pool-mini" }, [
        swatch(colours.get(pool)?.colour ?? "transparent"),
        h("span", { className: "mono", text: pool }),
      ]);
    const rows = routes.map((r) => {
      const button = h(
        "button",
        {
          className: "canary-route",
          attrs: {
            type: "button",
            title: `canary chain: ${r.canary_chain.join(" → ") || "none"}${r.degraded ? ` (degraded: ${r.degraded})` : ""}`,
          },
        },
        [
          h("span", { className: "mono canary-cc", text: r.country }),
          chip(r.stable),
          h("span", { className: "arrow", text: "→" }),
          chip(r.canary),
        ],
      );
      button.addEventListener("click", () => this.onChoose(r.country));
      return h(
        "li",
        {
          attrs: { "data-country": r.country, "data-stable": r.stable, "data-canary": r.canary },
        },
        [button],
      );
    });
    const limits = canary && report ? canaryLimits(canary.gates, report.stable_side) : null;
    const figureRow = (
      label: string,
      key: string,
      cells: readonly [string, string, string] | null,
    ): HTMLElement =>
      h("tr", { attrs: { "data-side": key } }, [
        h("th", { text: label, attrs: { scope: "row" } }),
        ...(cells ?? ["–", "–", "–"]).map((c) => h("td", { className: "mono", text: c })),
      ]);
    const figures = (f: CanarySideFigures | null): readonly [string, string, string] | null =>
      f ? [String(f.samples), percent(f.error_ratio), ms(f.p90_ms)] : null;
    const table = h("table", { className: "canary-figures" }, [
      h("thead", {}, [
        h("tr", {}, [
          h("th", { text: "side" }),
          h("th", { text: "requests" }),
          h("th", { text: "errors" }),
          h("th", { text: "p90" }),
        ]),
      ]),
      h("tbody", {}, [
        figureRow("canary", "canary", figures(report?.canary_side ?? null)),
        figureRow("stable", "stable", figures(report?.stable_side ?? null)),
        figureRow("gate", "gate", limits ? [limits.samples, limits.errors, limits.p90] : null),
      ]),
    ]);
    this.body.replaceChildren(
      head,
      h("p", {
        className: "pool-meta",
        text: report ? progress(report) : "waiting for the pusher's status…",
        attrs: { "data-field": "progress" },
      }),
      h(
        "ul",
        { className: "canary-routes" },
        rows.length
          ? rows
          : [h("li", { className: "muted", text: "changes no route under current health" })],
      ),
      table,
      report?.detail
        ? h("p", {
            className: "pool-meta canary-detail",
            text: report.detail,
            attrs: { "data-field": "detail" },
          })
        : "",
    );
  }
}
