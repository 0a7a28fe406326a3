/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page's entry point, bundled for the browser by pusher/ui/build/build-assets.ts. (The DOM
// libs are referenced here because the project's tsconfig is a Node one.)
import type { StatusDocument } from "../../status.js";
import type { UiMap } from "../ui-document.js";
import { CanaryView } from "./canary-view.js";
import { connect } from "./connection.js";
import { CountryList } from "./country-list.js";
import { DetailsView, Tooltip } from "./details-view.js";
import { byId } from "./dom.js";
import { FenceLegendView } from "./fence-legend-view.js";
import { HeaderView } from "./header-view.js";
import { LegendView } from "./legend-view.js";
import { MapView } from "./map-view.js";
import { type DirectoryEntry, poolCounts, routeFor } from "./model.js";
import { assignColours, type PoolColour } from "./palette.js";
import { PathwaysView } from "./pathways-view.js";
import { SummaryView } from "./summary-view.js";
import { ViewersView } from "./viewers-view.js";

interface PageState {
  map: UiMap | null;
  status: StatusDocument | null;
  colours: Map<string, PoolColour>;
  /** What the details panel shows: the focused country wins over the hovered one. */
  focused: string | null;
  hovered: string | null;
  /** Selected with a click, Enter or Space; shown when nothing is focused or hovered. */
  pinned: string | null;
  drawn: boolean;
}

function start(): void {
  const directory = JSON.parse(byId("ui-countries").textContent ?? "[]") as DirectoryEntry[];
  const codes = directory.map((d) => d.cc);
  const names = new Map(directory.map((d) => [d.cc, d.name]));
  const st: PageState = {
    map: null,
    status: null,
    colours: new Map(),
    focused: null,
    hovered: null,
    pinned: null,
    drawn: false,
  };
  const header = new HeaderView();
  const details = new DetailsView(byId("details"));
  const tooltip = new Tooltip(byId("tooltip"));
  const legend = new LegendView(byId<HTMLUListElement>("legend"));
  const fenceLegend = new FenceLegendView(
    byId("fence-panel"),
    byId<HTMLUListElement>("fence-legend"),
  );

  const showDetails = () => {
    const cc = st.focused ?? st.hovered ?? st.pinned;
    mapView.highlight(cc);
    details.show(cc, st.map ? { map: st.map, colours: st.colours, names } : null);
  };
  const mapView = new MapView(byId<SVGSVGElement>("map"), {
    onHover(cc, at) {
      st.hovered = cc;
      if (cc && at && st.map) {
        const r = routeFor(st.map, cc).route;
        const text = `${names.get(cc) ?? cc} (${cc}) → ${r.pool}${r.degraded ? " · degraded" : ""}`;
        tooltip.show(text, at, mapView.element().getBoundingClientRect().width);
      } else tooltip.hide();
      showDetails();
    },
    onFocus(cc) {
      st.focused = cc;
      showDetails();
    },
    onSelect(cc) {
      st.pinned = st.pinned === cc ? null : cc;
      showDetails();
    },
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && st.pinned) {
      st.pinned = null;
      showDetails();
    }
  });
  const list = new CountryList(
    byId<HTMLUListElement>("country-list"),
    byId<HTMLInputElement>("search"),
    byId("list-count"),
    directory,
    (cc) => {
      st.focused = cc;
      showDetails();
    },
  );

  const summary = new SummaryView(byId("summary"), (cc) => {
    st.focused = cc;
    showDetails();
  });

  const viewers = new ViewersView(
    byId("viewers-panel"),
    byId<HTMLUListElement>("viewers"),
    (cc) => {
      st.pinned = cc;
      showDetails();
    },
  );

  const canary = new CanaryView(byId("canary-panel"), byId("canary"), (cc) => {
    st.pinned = cc;
    showDetails();
  });
  const pathways = new PathwaysView(byId<HTMLUListElement>("pathways"), (cc) => {
    st.pinned = cc;
    showDetails();
  });
  const renderCanary = () =>
    canary.render(st.map?.canary ?? null, st.status?.canary ?? null, st.colours);

  const render = () => {
    header.render(st.status, st.map);
    if (!st.map) {
      details.show(null, null);
      return;
    }
    st.colours = assignColours(st.map.pools.map((p) => p.name));
    mapView.render(st.map, st.colours);
    legend.render(st.map, st.colours, poolCounts(st.map, codes));
    fenceLegend.render(st.map);
    viewers.render(st.map, names);
    renderCanary();
    pathways.render(st.map, st.colours, codes);
    list.render(st.map, st.colours);
    summary.render(st.map, codes);
    showDetails();
    document.body.dataset.rev = String(st.map.rev);
    markDrawn();
  };
  /** Once both the map and the status are shown: two frames later they have been painted. */
  const markDrawn = () => {
    if (st.drawn || !st.map || !st.status) return;
    st.drawn = true;
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        performance.mark("ui:drawn");
        document.body.dataset.drawn = "true";
      }),
    );
  };
  const banner = byId("banner");
  connect(
    "/ui/events",
    {
      onMap(map) {
        if (!st.map && !st.status) performance.mark("ui:data");
        st.map = map;
        render();
      },
      onStatus(status) {
        if (!st.map && !st.status) performance.mark("ui:data");
        st.status = status;
        // Only the header and the canary show the status: the map is not repainted for it.
        header.render(st.status, st.map);
        renderCanary();
        if (!st.map) details.show(null, null);
        markDrawn();
      },
      onState(state, since) {
        document.body.dataset.conn = state;
        byId("conn-text").textContent = state === "live" ? "live" : "lost";
        banner.hidden = state === "live";
        banner.textContent = since
          ? `Lost contact with the pusher at ${since.toISOString().slice(11, 19)} UTC: showing the last state it sent. Reconnecting…`
          : "";
      },
    },
    { silentMs: 12_000, reopenMs: 2_000 },
  );
}

// Started at `load`, so `ui.first_render_ms` (bench) measures exactly load → map drawn.
if (document.readyState === "complete") start();
else window.addEventListener("load", start, { once: true });
