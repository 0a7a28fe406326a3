import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueNames, useEtcd } from "../harness.js";
import { launchBrowser, type TestBrowser } from "./browser.js";
import { startUiPusher, type UiPusher } from "./ui-harness.js";

const ctx = useEtcd();

// docs/reference.md §8–§9: /ui marks a slow pool and shows a country's shed, in Chromium.
describe("slow pools on the routing map at /ui", () => {
  let ui: UiPusher;
  let b: TestBrowser;
  let prefix: string;
  const put = (k: string, v: unknown) =>
    ctx.client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));

  beforeAll(async () => {
    const names = uniqueNames();
    prefix = names.prefix;
    await put("pool/fra-1", {
      origin: "https://fra-1.origin.example.com",
      slow_ms: { low: 800, high: 2000 },
    });
    await put("pool/ams-1", { origin: "https://ams-1.origin.example.com" });
    for (const c of ["a", "b", "c"])
      await put(`health/fra-1/${c}`, { status: "healthy", p90_ms: 300, samples: 20 });
    await put("health/ams-1", { status: "healthy", p90_ms: 120 });
    await put("country/_default", { primary: "ams-1", fallbacks: [] });
    await put("country/DE", { primary: "fra-1", fallbacks: ["ams-1"] });
    await put("epoch", "1");
    ui = await startUiPusher({ endpoint: ctx.etcd.endpoint, ...names });
    // Lives for the whole file: useEtcd would stop it after the first test.
    ctx.cleanups.length = 0;
    b = await launchBrowser({ width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await ui?.stop();
  });

  it("marks fra-1 slow once its checkers' p90 reaches 1400 ms, and DE's panel shows the shed", async () => {
    await b.page.goto(`${ui.base}/ui`);
    await b.page.waitForSelector("body[data-drawn=true]", { timeout: 15_000 });
    const fra = b.page.locator("#legend li[data-pool=fra-1]");
    await b.page.waitForSelector("#legend li[data-pool=fra-1][data-health=healthy]");
    await expect(fra.getAttribute("data-shed")).resolves.toBe("");
    await expect(fra.locator(".tag-slow").count()).resolves.toBe(0);

    for (const c of ["a", "b", "c"])
      await put(`health/fra-1/${c}`, { status: "healthy", p90_ms: 1400, samples: 20 });
    await b.page.waitForSelector("#legend li[data-pool=fra-1][data-shed='50']", {
      timeout: 10_000,
    });
    await expect(fra.locator(".tag-slow").textContent()).resolves.toBe("slow: sheds 50 %");
    await expect(fra.locator(".pool-meta").textContent()).resolves.toBe(
      "p90 1400 ms · slow 800/2000 ms · 3/3 checkers",
    );

    const details = b.page.locator("#details");
    await b.page.locator("#c-DE").focus();
    await expect(details.getAttribute("data-cc")).resolves.toBe("DE");
    const field = (name: string) => details.locator(`[data-field=${name}] dd`).textContent();
    await expect(field("shed")).resolves.toBe("fra-1 50 %");
    await expect(field("weights")).resolves.toBe("fra-1 500 · ams-1 500");
    // Still fits 1280×800 with the extra row and tag.
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
