import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../../../testkit/browser.js";
import { runCli, tempFiles } from "../../edgectl/cli-harness.js";
import { uniqueNames, useEtcd } from "../harness.js";
import { fillOf, poolColours, KNOWN_STATE as STATE } from "./known-state.js";
import { Heartbeats, startUiPusher, type UiPusher } from "./ui-harness.js";

const ctx = useEtcd();
// The README's screenshot is refreshed on request only, so a test run leaves the tree clean.
const SCREENSHOT = fileURLToPath(
  new URL(
    process.env.UPDATE_SCREENSHOT === "1" ? "../../../docs/ui.png" : "../../../.tmp/ui.png",
    import.meta.url,
  ),
);

describe("the routing map at /ui, in Chromium", () => {
  const files = tempFiles();
  let ui: UiPusher;
  let b: TestBrowser;
  let hb: Heartbeats;
  let env: Record<string, string>;

  beforeAll(async () => {
    const { prefix, electionKey } = uniqueNames();
    env = { ETCD_ENDPOINTS: ctx.etcd.endpoint, ROUTING_PREFIX: prefix };
    const applied = await runCli(["apply", files.write(STATE), "--yes"], { env });
    expect(applied.code, applied.stderr).toBe(0);
    hb = new Heartbeats(env, ctx.client, prefix);
    await Promise.all([
      hb.start(["fra-1", "ams-1", "par-1"], 10, 1),
      // Killed in the degraded test: a short TTL so its lease expires soon after.
      hb.start(["sgp-1"], 2, 0.5),
    ]);
    ui = await startUiPusher({
      endpoint: ctx.etcd.endpoint,
      prefix,
      electionKey,
      id: "pusher-fra-a",
    });
    b = await launchBrowser({ width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    hb?.stopAll();
    await ui?.stop();
    files.cleanup();
  });

  it("renders at 1280×800 with strict headers, no console error and no request off loopback", async () => {
    const res = await b.page.goto(`${ui.base}/ui`);
    expect(res?.status()).toBe(200);
    const headers = res?.headers() ?? {};
    expect(headers["content-security-policy"]).toContain("default-src 'self'");
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["x-frame-options"]).toBe("DENY");
    await b.page.waitForSelector("body[data-drawn=true]", { timeout: 15_000 });
    await b.page.waitForSelector("#legend li[data-pool=sgp-1][data-health=healthy]");

    const painted = await b.page.evaluate(() => {
      const shapes = [...document.querySelectorAll("#shapes [data-cc]")];
      return {
        shapes: shapes.length,
        filled: shapes.filter((s) => s.getAttribute("fill")?.startsWith("#")).length,
        rows: document.querySelectorAll("#country-list button[data-cc]").length,
        width: document.documentElement.scrollWidth,
        height: document.documentElement.scrollHeight,
      };
    });
    expect(painted.shapes).toBeGreaterThan(230);
    expect(painted.filled).toBe(painted.shapes);
    expect(painted.rows).toBe(252);
    expect(painted.width).toBeLessThanOrEqual(1280);
    expect(painted.height).toBeLessThanOrEqual(800);
    // Small countries with rules show as dots.
    for (const cc of ["SG", "HK", "MT"])
      await expect(b.page.locator(`#d-${cc}`).isVisible()).resolves.toBe(true);

    expect(b.errors).toEqual([]);
    expect(b.offLoopback).toEqual([]);
    expect(b.requests.length).toBeGreaterThanOrEqual(4);
    expect(b.requests.every((u) => new URL(u).origin === ui.base)).toBe(true);
  });

  it("fills DE with fra-1's colour and BR with the default pool's muted shade", async () => {
    const fra = await poolColours(b, "fra-1");
    const ams = await poolColours(b, "ams-1");
    expect(fra.colour).toMatch(/^#[0-9a-f]{6}$/);
    expect(fra.colour).not.toBe(ams.colour);
    expect(await fillOf(b, "DE")).toBe(fra.colour);
    expect(await fillOf(b, "BR")).toBe(ams.muted);
    expect(ams.muted).not.toBe(ams.colour);
    await expect(b.page.locator("#c-BR").getAttribute("data-on-default")).resolves.toBe("true");
    // The browser paints what the attribute says (no stylesheet rule overrides it).
    const painted = await b.page.evaluate(() => {
      const de = document.getElementById("c-DE");
      return de ? getComputedStyle(de).fill : "";
    });
    const hex = Number.parseInt(fra.colour.slice(1), 16);
    expect(painted).toBe(`rgb(${hex >> 16}, ${(hex >> 8) & 255}, ${hex & 255})`);
    await expect(b.page.locator("#legend li[data-pool=fra-1] .served").textContent()).resolves.toBe(
      "3",
    );
  });

  it("repaints DE in ams-1's colour within 2 s of `edgectl boost DE --pool ams-1`, without a reload", async () => {
    await b.page.evaluate(() => {
      (window as unknown as { stayed: string }).stayed = "same document";
    });
    const revBefore = Number(await b.page.locator("body").getAttribute("data-rev"));
    const ams = await poolColours(b, "ams-1");
    const boosted = await runCli(["boost", "DE", "--pool", "ams-1", "--ttl", "10m"], { env });
    expect(boosted.code, boosted.stderr).toBe(0);
    const since = Date.now();
    await b.page.waitForFunction(
      (colour) => document.getElementById("c-DE")?.getAttribute("fill") === colour,
      ams.colour,
      { timeout: 2_000, polling: 20 },
    );
    const tookMs = Date.now() - since;
    expect(tookMs).toBeLessThanOrEqual(2_000);
    expect(await b.page.evaluate(() => (window as unknown as { stayed?: string }).stayed)).toBe(
      "same document",
    );
    expect(Number(await b.page.locator("body").getAttribute("data-rev"))).toBeGreaterThan(
      revBefore,
    );
    await expect(b.page.locator("#c-DE").getAttribute("data-source")).resolves.toBe("override/DE");
  });

  it("marks the countries that fell to the floor as degraded and the killed pool as missing", async () => {
    for (const cc of ["JP", "AU"]) {
      await expect(b.page.locator(`#c-${cc}`).getAttribute("data-degraded")).resolves.toBeNull();
    }
    await hb.kill("sgp-1");
    await b.page.waitForSelector("#legend li[data-pool=sgp-1][data-health=missing]", {
      timeout: 20_000,
    });
    await expect(b.page.locator("#legend li[data-pool=sgp-1] .health").textContent()).resolves.toBe(
      "missing",
    );
    const par = await poolColours(b, "par-1");
    for (const cc of ["JP", "AU"]) {
      const shape = b.page.locator(`#c-${cc}`);
      await expect(shape.getAttribute("data-degraded")).resolves.toBe("all-pools-unhealthy");
      await expect(shape.getAttribute("data-pool")).resolves.toBe("par-1");
      expect(await fillOf(b, cc)).toBe(par.colour);
      // The mark is a hatched, outlined overlay, not a colour change alone.
      await expect(b.page.locator(`#marks path[data-cc=${cc}]`).count()).resolves.toBeGreaterThan(
        0,
      );
    }
    await expect(b.page.locator("#d-SG").getAttribute("data-degraded")).resolves.toBe(
      "all-pools-unhealthy",
    );
    await expect(b.page.locator("#d-SG").isVisible()).resolves.toBe(true);
    // HK still has ams-1 after sgp-1; DE is boosted to ams-1: neither is degraded.
    for (const cc of ["HK", "DE", "BR"]) {
      await expect(
        b.page.locator(`[data-cc=${cc}]`).first().getAttribute("data-degraded"),
      ).resolves.toBeNull();
    }
    await expect(b.page.locator("#marks path[data-cc=HK]").count()).resolves.toBe(0);
    await expect(
      b.page.locator('#country-list button[data-cc="JP"]').getAttribute("data-degraded"),
    ).resolves.toBe("all-pools-unhealthy");
  });

  it("shows a country's route when it has keyboard focus (or the pointer), and saves the screenshot", async () => {
    const details = b.page.locator("#details");
    await b.page.locator("#c-BR").hover();
    await expect(details.getAttribute("data-cc")).resolves.toBe("BR");
    await expect(b.page.locator("#tooltip").textContent()).resolves.toBe("Brazil (BR) → ams-1");
    // A click keeps the route shown after the pointer leaves; Escape lets it go.
    await b.page.locator("#c-BR").click();
    await b.page.mouse.click(400, 30); // the header: focus and pointer leave the map
    await expect(details.getAttribute("data-cc")).resolves.toBe("BR");
    await b.page.keyboard.press("Escape");
    await expect(details.getAttribute("data-cc")).resolves.toBe("_default");

    await b.page.locator("#c-DE").focus();
    await expect(details.getAttribute("data-cc")).resolves.toBe("DE");
    const field = (name: string) => details.locator(`[data-field=${name}] dd`).textContent();
    await expect(field("pool")).resolves.toContain("ams-1");
    await expect(field("source")).resolves.toBe("override/DE");
    await expect(field("degraded")).resolves.toBe("no");

    // Tab moves to the next country on the map, and the panel follows it.
    await b.page.keyboard.press("Tab");
    const next = await b.page.evaluate(
      () => (document.activeElement as HTMLElement | null)?.dataset.cc,
    );
    expect(next).toMatch(/^[A-Z]{2}$/);
    expect(next).not.toBe("DE");
    await expect(details.getAttribute("data-cc")).resolves.toBe(next);

    // The list is the keyboard alternative: search, then Tab to the row.
    await b.page.locator("#search").focus();
    await b.page.keyboard.type("japan");
    await b.page.keyboard.press("Tab");
    await expect(details.getAttribute("data-cc")).resolves.toBe("JP");
    await expect(field("degraded")).resolves.toContain("all-pools-unhealthy");
    await expect(field("chain")).resolves.toContain("par-1");
    await expect(field("source")).resolves.toBe("floor");

    await b.page.locator("#search").fill("");
    await b.page.locator("#c-DE").focus();
    await b.page.screenshot({ path: SCREENSHOT });
    expect(b.errors).toEqual([]);
    expect(b.offLoopback).toEqual([]);
  });

  it("says so when it loses the pusher", async () => {
    await expect(b.page.locator("body").getAttribute("data-conn")).resolves.toBe("live");
    await ui.stop();
    await b.page.waitForSelector("body[data-conn=lost]", { timeout: 10_000 });
    await expect(b.page.locator("#banner").isVisible()).resolves.toBe(true);
    await expect(b.page.locator("#banner").textContent()).resolves.toContain(
      "Lost contact with the pusher",
    );
    // The last map stays on screen.
    await expect(b.page.locator("#c-DE").getAttribute("data-pool")).resolves.toBe("ams-1");
  });
});
