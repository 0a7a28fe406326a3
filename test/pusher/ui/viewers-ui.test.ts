import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UiData } from "../../../pusher/ui/ui-document.js";
import { launchBrowser, type TestBrowser } from "../../../testkit/browser.js";
import { uniqueNames, useEtcd } from "../harness.js";
import { startUiPusher, type UiPusher } from "./ui-harness.js";

const ctx = useEtcd();

// docs/reference.md §8, §12 and §14: /ui draws where viewers go from observed/, in Chromium.
describe("where viewers go on the routing map at /ui", () => {
  let ui: UiPusher;
  let b: TestBrowser;
  let prefix: string;
  const put = (k: string, v: unknown) =>
    ctx.client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));

  beforeAll(async () => {
    const names = uniqueNames();
    prefix = names.prefix;
    await put("pool/us-east", {
      origin: "https://us-east.origin.example.com",
      slow_ms: { low: 800, high: 3000 },
    });
    await put("pool/sa-east", { origin: "https://sa-east.origin.example.com" });
    await put("health/us-east", { status: "healthy", p90_ms: 300 });
    await put("health/sa-east", { status: "healthy", p90_ms: 120 });
    await put("country/_default", { primary: "us-east", fallbacks: ["sa-east"] });
    await put("country/AR", { primary: "sa-east", fallbacks: [] });
    await put("epoch", "1");
    // Over us-east's high watermark (3000); between sa-east's default 1 s and 2 s; under it.
    // The edge cache answered 87.4 % of BR's us-east requests and none of BR's sa-east ones; AR's
    // observation predates cache counting (no hit_ratio).
    await put("observed/BR/us-east", {
      p90_ms: 5000,
      samples: 1250,
      error_ratio: 0.012,
      hit_ratio: 0.874,
    });
    await put("observed/BR/sa-east", { p90_ms: 1500, samples: 300, error_ratio: 0, hit_ratio: 0 });
    await put("observed/AR/sa-east", { p90_ms: 400, samples: 600, error_ratio: 0 });
    // Not an observation: not drawn.
    await put("observed/CL/sa-east", { p90_ms: "slow" });
    ui = await startUiPusher({ endpoint: ctx.etcd.endpoint, ...names });
    ctx.cleanups.length = 0;
    b = await launchBrowser({ width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await ui?.stop();
  });

  it("gives /ui/data each country → pool flow, busiest first", async () => {
    const data = (await (await fetch(`${ui.base}/ui/data`)).json()) as UiData;
    expect(data.map?.viewers).toEqual([
      {
        country: "BR",
        pool: "us-east",
        requests: 1250,
        p90_ms: 5000,
        error_ratio: 0.012,
        hit_ratio: 0.874,
      },
      { country: "AR", pool: "sa-east", requests: 600, p90_ms: 400, error_ratio: 0 },
      {
        country: "BR",
        pool: "sa-east",
        requests: 300,
        p90_ms: 1500,
        error_ratio: 0,
        hit_ratio: 0,
      },
    ]);
  });

  it("draws a bar per flow weighted by requests and coloured by p90, with its cache hits, live as observed/ changes", async () => {
    await b.page.goto(`${ui.base}/ui`);
    await b.page.waitForSelector("body[data-drawn=true]", { timeout: 15_000 });
    const rows = b.page.locator("#viewers li");
    await expect(b.page.locator("#viewers-panel").isVisible()).resolves.toBe(true);
    const flows = await rows.evaluateAll((els) =>
      els.map((el) => ({
        route: el.querySelector(".viewers-route")?.textContent,
        level: el.getAttribute("data-level"),
        weight: el.getAttribute("data-weight"),
        meta: el.querySelector(".pool-meta")?.textContent,
        hit: el.getAttribute("data-hit"),
      })),
    );
    expect(flows).toEqual([
      {
        route: "BR → us-east",
        level: "bad",
        weight: "100%",
        meta: "p90 5000 ms · 87 % hits · 1250 requests · 1.2 % errors",
        hit: "0.874",
      },
      {
        route: "AR → sa-east",
        level: "good",
        weight: "48%",
        meta: "p90 400 ms · 600 requests · 0.0 % errors",
        hit: null,
      },
      {
        route: "BR → sa-east",
        level: "slow",
        weight: "24%",
        meta: "p90 1500 ms · 0 % hits · 300 requests · 0.0 % errors",
        hit: "0",
      },
    ]);
    const colours = await rows
      .locator(".viewers-bar")
      .evaluateAll((els) => els.map((el) => getComputedStyle(el).backgroundColor));
    expect(new Set(colours).size).toBe(3);

    await rows.nth(1).locator("button").click();
    await expect(b.page.locator("#details").getAttribute("data-cc")).resolves.toBe("AR");

    // The observer's lease runs out for BR on us-east: the flow goes, without a reload.
    await ctx.client.delete().key(`${prefix}observed/BR/us-east`);
    await b.page.waitForFunction(
      () => document.querySelectorAll("#viewers li").length === 2,
      null,
      {
        timeout: 10_000,
      },
    );
    await expect(rows.first().getAttribute("data-weight")).resolves.toBe("100%");
    await expect(rows.first().getAttribute("data-country")).resolves.toBe("AR");

    const size = await b.page.evaluate(() => ({
      width: document.documentElement.scrollWidth,
      height: document.documentElement.scrollHeight,
    }));
    expect(size.width).toBeLessThanOrEqual(1280);
    expect(size.height).toBeLessThanOrEqual(800);
    expect(b.errors).toEqual([]);
    expect(b.offLoopback).toEqual([]);
  }, 60_000);
});
