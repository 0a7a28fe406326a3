import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../../../testkit/browser.js";
import { runCli, tempFiles } from "../../edgectl/cli-harness.js";
import { uniqueNames, useEtcd } from "../harness.js";
import { startUiPusher, type UiPusher } from "./ui-harness.js";

const ctx = useEtcd();

/** Europe fenced to the EU regions; the rest of the world on a US pool. */
const STATE = {
  pools: {
    "fra-1": { origin: "https://fra-1.origin.example.com", region: "eu-central" },
    "par-1": { origin: "https://par-1.origin.example.com", region: "eu-west" },
    "nyc-1": { origin: "https://nyc-1.origin.example.com", region: "us-east" },
  },
  countries: {
    _default: { primary: "nyc-1", fallbacks: ["par-1"] },
    EU: { primary: "fra-1", fallbacks: ["par-1"] },
  },
  fences: {
    eu: { continents: ["EU"], countries: [], regions: ["eu-central", "eu-west"], floor: "par-1" },
  },
};

describe("the routing map at /ui shows fences (docs/reference.md §10), in Chromium", () => {
  const files = tempFiles();
  let ui: UiPusher;
  let b: TestBrowser;

  beforeAll(async () => {
    const { prefix, electionKey } = uniqueNames();
    const env = { ETCD_ENDPOINTS: ctx.etcd.endpoint, ROUTING_PREFIX: prefix };
    const applied = await runCli(["apply", files.write(STATE), "--yes"], { env });
    expect(applied.code, applied.stderr).toBe(0);
    for (const p of Object.keys(STATE.pools))
      await ctx.client.put(`${prefix}health/${p}`).value('{"status":"healthy"}');
    ui = await startUiPusher({ endpoint: ctx.etcd.endpoint, prefix, electionKey });
    b = await launchBrowser({ width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await ui?.stop();
    files.cleanup();
  });

  it("outlines every fenced country, names the fence in the legend, and shows it in the route", async () => {
    const res = await b.page.goto(`${ui.base}/ui`);
    expect(res?.status()).toBe(200);
    await b.page.waitForSelector("body[data-drawn=true]", { timeout: 15_000 });
    await b.page.waitForSelector("#fence-legend li[data-fence=eu]");
    const seen = await b.page.evaluate(() => {
      const outlined = new Set(
        [...document.querySelectorAll("#fence-outlines .fence-outline[data-fence=eu]")].map((el) =>
          el.getAttribute("data-cc"),
        ),
      );
      const legend = document.querySelector("#fence-legend li[data-fence=eu]");
      // the outline never takes the pointer: what is under DE's centre is DE's own shape
      const box = document.getElementById("c-DE")?.getBoundingClientRect();
      const under = box
        ? document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2)
        : null;
      return {
        de: outlined.has("DE"),
        fr: outlined.has("FR"),
        us: outlined.has("US"),
        br: outlined.has("BR"),
        panelHidden: (document.getElementById("fence-panel") as HTMLElement).hidden,
        legend: legend?.textContent ?? "",
        underDE: under?.id ?? "",
      };
    });
    expect(seen).toMatchObject({
      de: true,
      fr: true,
      us: false,
      br: false,
      panelHidden: false,
      underDE: "c-DE",
    });
    expect(seen.legend).toContain("eu");
    expect(seen.legend).toContain("eu-central, eu-west · floor par-1");
    // the route panel of a fenced country names its fence
    await b.page.locator("#c-DE").focus();
    await expect(b.page.locator("#details [data-field=fence] dd").textContent()).resolves.toBe(
      "eu",
    );
    await b.page.locator("#c-US").focus();
    await expect(b.page.locator("#details [data-field=fence] dd").textContent()).resolves.toBe(
      "none",
    );
  }, 60_000);
});
