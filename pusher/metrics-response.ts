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
 * peak at ~140 MiB, more than the unit's old space holds beside a 100,000-key prefix.
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
    // A scraper that hung up gets nothing more, and costs no more rendering.
    if (res.destroyed) return;
    let text: string;
    try {
      text = await registry.getSingleMetricAsString(name);
    } catch {
      if (first) onError();
      else res.destroy();
      return;
    }
    if (res.destroyed) return;
    if (first) res.writeHead(200, { "content-type": registry.contentType });
    // registry.metrics() joins the metrics with a blank line and ends with a newline.
    // A scraper that hangs up never drains: its close ends the wait.
    if (!res.write(first ? text : `\n\n${text}`) && !res.destroyed) await drained(res);
    first = false;
  }
  if (res.destroyed) return;
  if (first) res.writeHead(200, { "content-type": registry.contentType });
  res.end("\n");
}
