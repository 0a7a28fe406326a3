import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CanaryJudgement, DEFAULT_CANARY_GATES } from "../../../core/index.js";
import type { UiData } from "../../../pusher/ui/ui-document.js";
import { launchBrowser, type TestBrowser } from "../../../testkit/browser.js";
import { canaryDoc } from "../../helpers/canary-doc.js";
import { uniqueNames, useEtcd } from "../harness.js";
import { startUiPusher, type UiPusher } from "./ui-harness.js";

const ctx = useEtcd();

// docs/reference.md §8 and §13: /ui shows the running canary's state, share, routes and figures.
describe("the running canary on the routing map at /ui", () => {
  let ui: UiPusher;
  let b: TestBrowser;
  let prefix: string;
  const put = (k: string, v: unknown) =>
    ctx.client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));
  // etcd text the page must show as text: the judge's detail line.
  const hostile = `gates hold <img src=x onerror="document.body.dataset.pwned='1'">`;
  const judgement = (): CanaryJudgement => ({
    id: "c9",
    verdict: "passing",
    judged_at: new Date().toISOString(),
    passing_since: "2026-11-29T15:01:30.000Z",
    canary: { samples: 240, error_ratio: 0.01, p90_ms: 250 },
    stable: { samples: 1300, error_ratio: 0.005, p90_ms: 200 },
    countries: ["BR"],
    minutes: 2,
    detail: hostile,
    judge: "obs-1:42 observing https://edge.example.com",
  });

  beforeAll(async () => {
    const names = uniqueNames();
    prefix = names.prefix;
    await put("pool/us-east", { origin: "https://us-east.origin.example.com" });
    await put("pool/sa-east", { origin: "https://sa-east.origin.example.com" });
    await put("health/us-east", { status: "healthy" });
    await put("health/sa-east", { status: "healthy" });
    await put("country/_default", { primary: "us-east", fallbacks: [] });
    await put("country/BR", { primary: "us-east", fallbacks: ["sa-east"] });
    await put("epoch", "9");
    await put(
      "canary/current",
      canaryDoc(
        { "country/BR": { primary: "sa-east", fallbacks: ["us-east"] } },
        { id: "c9", epoch: 9, share: 15, for_s: 300, started_at: new Date().toISOString() },
      ),
    );
    await put("canary/judgement", judgement());
    ui = await startUiPusher({ endpoint: ctx.etcd.endpoint, ...names });
    ctx.cleanups.length = 0;
    b = await launchBrowser({ width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await ui?.stop();
  });

  it("gives /ui/data the canary's routes, both sides, beside /status's state and figures", async () => {
    const text = await (await fetch(`${ui.base}/ui/data`)).text();
    const data = JSON.parse(text) as UiData;
    expect(data.map?.canary).toEqual({
      id: "c9",
      share: 15,
      gates: { ...DEFAULT_CANARY_GATES },
      routes: [
        {
          country: "BR",
          stable: "us-east",
          canary: "sa-east",
          canary_chain: ["sa-east", "us-east"],
          degraded: null,
        },
      ],
    });
    expect(data.status.canary).toMatchObject({ id: "c9", state: "judging", verdict: "passing" });
    expect(text).not.toContain("origin.example.com");
  });

  it("draws id, state, share, the changed route and each side's figures; frozen and gone live", async () => {
    await b.page.goto(`${ui.base}/ui`);
    await b.page.waitForSelector("body[data-drawn=true]", { timeout: 15_000 });
    const panel = b.page.locator("#canary-panel");
    await expect(panel.isVisible()).resolves.toBe(true);
    const field = (f: string) => panel.locator(`[data-field=${f}]`).textContent();
    await expect(field("id")).resolves.toBe("c9");
    await expect(field("state")).resolves.toBe("running");
    await expect(field("share")).resolves.toBe("15 % of its routes' viewers");
    await expect(field("progress")).resolves.toMatch(
      /^judged passing since 15:01:30 UTC · \d+ s of --for 5 min$/,
    );
    const routes = await panel.locator("li[data-country]").evaluateAll((els) =>
      els.map((el) => ({
        country: el.getAttribute("data-country"),
        text: el.textContent,
      })),
    );
    expect(routes).toEqual([{ country: "BR", text: "BRus-east→sa-east" }]);
    const figures = await panel
      .locator("tbody tr")
      .evaluateAll((els) =>
        els.map((el) => [...el.children].map((c) => c.textContent ?? "").join(" | ")),
      );
    expect(figures).toEqual([
      "canary | 240 | 1.0 % | 250 ms",
      "stable | 1300 | 0.5 % | 200 ms",
      // errors ≤ stable + 1 point; p90 ≤ 200 × 1.25 + 50; the samples each side needs
      "gate | ≥ 200 | ≤ 1.5 % | ≤ 300 ms",
    ]);
    // The judge's detail is etcd text: shown as text, never as markup.
    await expect(field("detail")).resolves.toBe(hostile);
    await expect(panel.locator("img").count()).resolves.toBe(0);

    await panel.locator("li[data-country=BR] button").click();
    await expect(b.page.locator("#details").getAttribute("data-cc")).resolves.toBe("BR");
    await expect(b.page.locator("#details [data-field=canary] dd").textContent()).resolves.toBe(
      "15 % → sa-east (c9)",
    );

    // The judge's lease ran out: the canary is frozen, without a reload.
    await ctx.client.delete().key(`${prefix}canary/judgement`);
    await b.page.waitForFunction(
      () => document.querySelector("#canary-panel [data-field=state]")?.textContent === "frozen",
      null,
      { timeout: 10_000 },
    );
    await expect(field("progress")).resolves.toBe(
      "no judge: canary/judgement is absent: keeps its share, never promoted without a judgement",
    );
    await expect(panel.getAttribute("data-state")).resolves.toBe("frozen");

    const size = await b.page.evaluate(() => ({
      width: document.documentElement.scrollWidth,
      height: document.documentElement.scrollHeight,
    }));
    expect(size.width).toBeLessThanOrEqual(1280);
    expect(size.height).toBeLessThanOrEqual(800);

    // The canary ends: the panel goes, and the country's route has no canary side.
    await ctx.client.delete().key(`${prefix}canary/current`);
    await b.page.waitForFunction(
      () => (document.getElementById("canary-panel") as HTMLElement | null)?.hidden === true,
      null,
      { timeout: 10_000 },
    );
    await expect(b.page.locator("#details [data-field=canary] dd").textContent()).resolves.toBe(
      "none",
    );
    await expect(b.page.evaluate(() => document.body.dataset.pwned)).resolves.toBeUndefined();
    expect(b.errors).toEqual([]);
    expect(b.offLoopback).toEqual([]);
  }, 60_000);
});
