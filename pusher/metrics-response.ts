import type { ServerResponse } from "node:http";
import type { Registry } from "prom-client";

/** Until `res` can take more, or is closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/**
 * Answers a scrape with `registry`'s text (the Prometheus format) one metric at a time: the same
 * bytes as `registry.metrics()`, but only one metric's text and garbage is alive at once. At
 * 50,000 pools the per-pool gauges are most of a scrape; rendered whole, its text and garbage
 * (~140 MiB at the peak) outgrew the unit's old space beside a 100,000-key prefix.
 * Resolves once the answer is written; a metric that fails before anything is sent gives
 * `onError`'s answer, one that fails later cuts the response (the scraper sees a failed scrape).
 */
export async function writeMetrics(
  registry: Registry,
  res: ServerResponse,
  onError: () => void,
): Promise<void> {
  const names = registry.getMetricsAsArray().map((m) => m.name);
  let first = true;
  for (const name of names) {
    let text: string;
    try {
      text = await registry.getSingleMetricAsString(name);
    } catch {
      if (first) onError();
      else res.destroy();
      return;
    }
    if (first) res.writeHead(200, { "content-type": registry.contentType });
    // registry.metrics() joins the metrics with a blank line and ends with a newline.
    // A scraper that hangs up never drains: its close ends the wait.
    if (!res.write(first ? text : `\n\n${text}`) && !res.destroyed) await drained(res);
    if (res.destroyed) return;
    first = false;
  }
  if (first) res.writeHead(200, { "content-type": registry.contentType });
  res.end("\n");
}
