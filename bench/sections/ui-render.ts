import { launchBrowser } from "../../testkit/browser.js";
import type { Cleanup } from "../lib/cleanup.js";
import { scaleFixture } from "../lib/fixture.js";
import { startStack } from "../lib/stack.js";
import { round, summarize } from "../lib/stats.js";

/** `ui` in results.json. */
export interface UiRenderResult {
  /** Browser `load` → the map drawn (every country filled, legend and list built), p50. */
  readonly first_render_ms: number;
  readonly first_render_max_ms: number;
  /** Floor, same loads: `load` → the first map and status received over `/ui/events`. */
  readonly data_ms: number;
  /** What the page itself costs: data received → map drawn (p50). */
  readonly render_only_ms: number;
  /** Rows of the map (every ISO code, XX, T1 and `_default`). */
  readonly countries: number;
  /** Shapes drawn on the map. */
  readonly shapes: number;
  readonly loads: number;
  readonly goal_ms: 500;
}

/** How many page loads to measure. */
export interface UiRenderOptions {
  readonly loads: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

interface LoadTiming {
  readonly load: number;
  readonly data: number;
  readonly drawn: number;
  readonly shapes: number;
}

/**
 * The pusher binary (local sink) serves `/ui` for a map with a rule for every country (252 rows);
 * headless Chromium (1280×800) loads the page again and again. Each load reads the page's own
 * marks: `ui:data` (first state received) and `ui:drawn` (two frames after the first full
 * render), against the navigation's `loadEventStart`.
 */
export async function uiRender(o: UiRenderOptions): Promise<UiRenderResult> {
  const fixture = scaleFixture({ keys: 0, pools: 8 });
  const countries = fixture.filter((e) => e.rel.startsWith("country/")).length;
  const stack = await startStack(o.cleanup, fixture);
  const browser = await launchBrowser({ width: 1280, height: 800 });
  o.cleanup.add("chromium", () => browser.close());
  const url = `http://127.0.0.1:${stack.pusher.port}/ui`;

  const once = async (): Promise<LoadTiming> => {
    await browser.page.goto(url, { waitUntil: "load" });
    await browser.page.waitForSelector("body[data-drawn=true]", { timeout: 30_000 });
    // No named helpers inside: tsx (esbuild keepNames) would wrap them in a `__name` call the
    // page does not have.
    return browser.page.evaluate(() => ({
      load: (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming)
        .loadEventStart,
      data: performance.getEntriesByName("ui:data")[0]?.startTime ?? Number.NaN,
      drawn: performance.getEntriesByName("ui:drawn")[0]?.startTime ?? Number.NaN,
      shapes: document.querySelectorAll("#shapes [data-cc][fill]").length,
    }));
  };
  await once(); // warm-up: the pusher reads its page files on the first request
  const samples: LoadTiming[] = [];
  for (let i = 0; i < o.loads; i++) samples.push(await once());
  if (browser.errors.length || browser.offLoopback.length) {
    throw new Error(
      `the page misbehaved: ${[...browser.errors, ...browser.offLoopback].join("; ")}`,
    );
  }
  const first = summarize(samples.map((s) => s.drawn - s.load));
  const data = summarize(samples.map((s) => s.data - s.load));
  const render = summarize(samples.map((s) => s.drawn - s.data));
  o.log(
    `  ui: load → drawn p50 ${round(first.p50)} ms (max ${round(first.max)}), of which data ${round(data.p50)} ms; ${countries} countries`,
  );
  return {
    first_render_ms: round(first.p50),
    first_render_max_ms: round(first.max),
    data_ms: round(data.p50),
    render_only_ms: round(render.p50),
    countries,
    shapes: samples[0]?.shapes ?? 0,
    loads: samples.length,
    goal_ms: 500,
  };
}
