import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import * as vega from "vega";
import * as vl from "vega-lite";
import { type Figure, type Sample, seriesKind } from "./samples.js";

/** One PNG: which figures it draws, and how lines are told apart. */
interface PlotSpec {
  readonly file: string;
  readonly title: string;
  readonly yTitle: string;
  readonly figures: readonly Figure[];
  /**
   * `process`: one line per process, coloured by kind; `holder`: one line per series
   * (`etcd:m0<-peer`), coloured by what follows `<-`; `figure`: one line per figure.
   */
  readonly lines: "process" | "holder" | "figure";
  /** The series drawn, when not all. */
  readonly only?: RegExp;
}

/** The plots the soak writes, one per figure (cluster figures of one unit share one). */
export const PLOTS: readonly PlotSpec[] = [
  {
    file: "rss.png",
    title: "RSS per process",
    yTitle: "MiB",
    figures: ["rss_mib"],
    lines: "process",
  },
  {
    file: "anon.png",
    title: "Anonymous RSS per process (RSS less mapped files)",
    yTitle: "MiB",
    figures: ["anon_mib"],
    lines: "process",
  },
  {
    file: "heap.png",
    title: "V8 live heap per process (heap used after a full collection)",
    yTitle: "MiB",
    figures: ["heap_mib"],
    lines: "process",
  },
  {
    file: "heap-used.png",
    title: "V8 heap used per process at each sample (live heap and garbage)",
    yTitle: "MiB",
    figures: ["heap_used_mib"],
    lines: "process",
  },
  {
    file: "heap-committed.png",
    title: "V8 heap committed per process (used or not)",
    yTitle: "MiB",
    figures: ["heap_total_mib"],
    lines: "process",
  },
  {
    file: "fds.png",
    title: "Open file descriptors per process",
    yTitle: "fds",
    figures: ["fds"],
    lines: "process",
  },
  {
    file: "sockets.png",
    title: "Descriptors of the etcd members, by what holds the other end",
    yTitle: "fds",
    figures: ["sockets"],
    lines: "holder",
    only: /^etcd:/,
  },
  {
    file: "handles.png",
    title: "Active libuv handles per process",
    yTitle: "handles",
    figures: ["handles"],
    lines: "process",
  },
  {
    file: "ui-streams.png",
    title: "Open /ui/events streams per pusher",
    yTitle: "streams",
    figures: ["ui_streams"],
    lines: "process",
  },
  {
    file: "series.png",
    title: "/metrics series per process",
    yTitle: "series",
    figures: ["series"],
    lines: "process",
  },
  {
    file: "etcd.png",
    title: "etcd: leases and watchers",
    yTitle: "count",
    figures: ["leases", "leases_held", "leases_listed", "watchers", "watch_streams"],
    lines: "figure",
  },
  {
    file: "writes.png",
    title: "Changes to etcd and KV writes (cumulative)",
    yTitle: "count",
    figures: ["changes", "kv_writes"],
    lines: "figure",
  },
  {
    file: "responses.png",
    title: "Worker answers (cumulative)",
    yTitle: "answers",
    figures: ["responses_2xx", "responses_other"],
    lines: "figure",
  },
];

/** Renders a Vega-Lite spec to PNG (Vega's SVG renderer, then resvg). */
export async function renderPng(spec: vl.TopLevelSpec): Promise<Buffer> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  return new Resvg(svg, { background: "white", font: { loadSystemFonts: true } }).render().asPng();
}

/** The Vega-Lite spec of one plot: lines over time, a rule where the judged second half starts. */
export function plotSpec(p: PlotSpec, samples: readonly Sample[], halfAt: number): vl.TopLevelSpec {
  const rows = samples
    .filter((s) => p.figures.includes(s.figure) && (p.only?.test(s.series) ?? true))
    .map((s) => ({
      t: Math.round(s.t * 10) / 10,
      value: s.value,
      line: p.lines === "figure" ? s.figure : s.series,
      group:
        p.lines === "figure"
          ? s.figure
          : p.lines === "holder"
            ? s.series.slice(s.series.indexOf("<-") + 2)
            : seriesKind(s.series),
    }));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: p.title,
    width: 800,
    height: 300,
    layer: [
      {
        data: { values: rows },
        mark: { type: "line", strokeWidth: 1.2 },
        encoding: {
          x: { field: "t", type: "quantitative", title: "seconds" },
          y: { field: "value", type: "quantitative", title: p.yTitle },
          color: { field: "group", type: "nominal", title: null },
          detail: { field: "line", type: "nominal" },
        },
      },
      {
        data: { values: [{ t: halfAt }] },
        mark: { type: "rule", strokeDash: [4, 4], color: "gray" },
        encoding: { x: { field: "t", type: "quantitative" } },
      },
    ],
  } as vl.TopLevelSpec;
}

/** Writes every plot into `dir`; returns the files written. */
export async function writePlots(
  dir: string,
  samples: readonly Sample[],
  halfAt: number,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (const p of PLOTS) {
    if (!samples.some((s) => p.figures.includes(s.figure))) continue;
    const file = join(dir, p.file);
    await writeFile(file, await renderPng(plotSpec(p, samples, halfAt)));
    files.push(file);
  }
  return files;
}
