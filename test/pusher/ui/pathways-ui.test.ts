import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UiData } from "../../../pusher/ui/ui-document.js";
import { launchBrowser, type TestBrowser } from "../../../testkit/browser.js";
import { uniqueNames, useEtcd } from "../harness.js";
import { startUiPusher, type UiPusher } from "./ui-harness.js";

const ctx = useEtcd();

// docs/reference.md §8 and §15: /ui shows the steering pathway order of every country, in Chromium.
describe("pathway orders per country on the routing map at /ui", () => {
  let ui: UiPusher;
  let b: TestBrowser;
  let prefix: string;
  const put = (k: string, v: unknown) =>
    ctx.client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));

  beforeAll(async () => {
    const names = uniqueNames();
    prefix = names.prefix;
    await put("pool/fra-1", { origin: "https://fra-1.origin.example.com", region: "eu-central" });
    await put("pool/ams-1", { origin: "https://ams-1.origin.example.com", region: "eu-west" });
    await put("pool/par-1", { origin: "https://par-1.origin.example.com", region: "eu-west" });
    await put("health/fra-1", { status: "healthy" });
    await put("health/ams-1", { status: "healthy" });
    await put("health/par-1", { status: "unhealthy" });
    await put("country/_default", { primary: "fra-1", fallbacks: ["ams-1"] });
    await put("country/BR", { primary: "ams-1", fallbacks: ["par-1", "fra-1"] });
    await put("country/US", {
      primary: "fra-1",
      fallbacks: ["ams-1"],
      weights: { "fra-1": 80, "ams-1": 20 },
    });
    await put("fence/eu", {
      countries: ["CH"],
      continents: [],
      regions: ["eu-central"],
      floor: "fra-1",
    });
    await put("fence/mars", {
      countries: ["ZA"],
      continents: [],
      regions: ["mars"],
      floor: "fra-1",
    });
    await put("epoch", "1");
    ui = await startUiPusher({ endpoint: ctx.etcd.endpoint, ...names });
    ctx.cleanups.length = 0;
    b = await launchBrowser({ width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await ui?.stop();
  });

  it("gives /ui/data each route's orders, countries with the same grouped, without origins", async () => {
    const text = await (await fetch(`${ui.base}/ui/data`)).text();
    const data = JSON.parse(text) as UiData;
    const of = (cc: string) => data.map?.pathways.find((g) => g.countries.includes(cc))?.shares;
    // par-1 is unhealthy: never offered.
    expect(of("BR")).toEqual([{ pool: "ams-1", weight: 100, order: ["ams-1", "fra-1"] }]);
    expect(of("CH")).toEqual([{ pool: "fra-1", weight: 100, order: ["fra-1"] }]);
    expect(of("ZA")).toEqual([]);
    expect(text).not.toContain("origin.example.com");
  });

  it("draws each order with its countries, shows a country's orders, and follows health live", async () => {
    await b.page.goto(`${ui.base}/ui`);
    await b.page.waitForSelector("body[data-drawn=true]", { timeout: 15_000 });
    const groups = () =>
      b.page.locator("#pathways li").evaluateAll((els) =>
        els.map((el) => ({
          orders: el.getAttribute("data-orders"),
          countries: [...el.querySelectorAll("[data-cc]")].map((c) => c.textContent).join(" "),
          served: el.querySelector("[data-field=served]")?.textContent,
          text: [...el.querySelectorAll(".pathway-order")].map((o) => o.textContent).join(" | "),
        })),
      );
    await expect(b.page.locator("#pathways-panel").isVisible()).resolves.toBe(true);
    // 251 rule targets besides _default; BR, US, CH and ZA have routes of their own.
    expect(await groups()).toEqual([
      {
        orders: "100:fra-1>ams-1",
        countries: "_default",
        served: "247 countries",
        text: "fra-1→ams-1",
      },
      { orders: "100:ams-1>fra-1", countries: "BR", served: "1 country", text: "ams-1→fra-1" },
      { orders: "100:fra-1", countries: "CH", served: "1 country", text: "fra-1" },
      {
        orders: "80:fra-1>ams-1 20:ams-1>fra-1",
        countries: "US",
        served: "1 country",
        text: "80 %fra-1→ams-1 | 20 %ams-1→fra-1",
      },
      {
        orders: "",
        countries: "ZA",
        served: "1 country",
        text: "none: no pool inside its fence (503)",
      },
    ]);

    const details = (cc: string) =>
      b.page
        .locator(`#pathways [data-cc=${cc}]`)
        .click()
        .then(async () => {
          await expect(b.page.locator("#details").getAttribute("data-cc")).resolves.toBe(cc);
          return b.page.locator("#details [data-field=pathways] dd").textContent();
        });
    await expect(details("US")).resolves.toBe("80 %: fra-1 → ams-1 · 20 %: ams-1 → fra-1");
    await expect(details("CH")).resolves.toBe("fra-1");

    // ams-1 turns unhealthy: it leaves every order, without a reload; BR now shares CH's order.
    await put("health/ams-1", { status: "unhealthy" });
    await b.page.waitForFunction(
      () =>
        [...document.querySelectorAll("#pathways li")].every(
          (el) => !el.getAttribute("data-orders")?.includes("ams-1"),
        ),
      null,
      { timeout: 10_000 },
    );
    const after = await groups();
    expect(after.find((g) => g.countries.includes("BR"))).toMatchObject({
      orders: "100:fra-1",
      served: "250 countries",
    });
    await expect(b.page.locator("#details [data-field=pathways] dd").textContent()).resolves.toBe(
      "fra-1",
    );

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
