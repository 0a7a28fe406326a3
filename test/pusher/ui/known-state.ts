import type { TestBrowser } from "../../../testkit/browser.js";

/**
 * The known state: DE on fra-1, BR on `_default` (ams-1); JP, SG and AU name only sgp-1, so they
 * fall to the floor (par-1) when its heartbeat dies; HK names sgp-1 then ams-1, so it does not.
 */
export const KNOWN_STATE = {
  pools: {
    "fra-1": { origin: "https://fra-1.origin.example.com", region: "eu-central" },
    "ams-1": { origin: "https://ams-1.origin.example.com", region: "eu-west" },
    "par-1": { origin: "https://par-1.origin.example.com", region: "eu-west" },
    "sgp-1": { origin: "https://sgp-1.origin.example.com", region: "ap-southeast" },
  },
  countries: {
    _default: { primary: "ams-1", fallbacks: ["par-1"] },
    DE: { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
    AT: { primary: "fra-1", fallbacks: ["ams-1"] },
    PL: { primary: "fra-1", fallbacks: ["ams-1"] },
    FR: { primary: "par-1", fallbacks: ["ams-1"] },
    ES: { primary: "par-1", fallbacks: ["ams-1"] },
    MT: { primary: "par-1", fallbacks: ["fra-1"] },
    JP: { primary: "sgp-1", fallbacks: [] },
    SG: { primary: "sgp-1", fallbacks: [] },
    AU: { primary: "sgp-1", fallbacks: [] },
    HK: { primary: "sgp-1", fallbacks: ["ams-1"] },
  },
};

/** The legend's colours of a pool, as the page assigned them. */
export async function poolColours(b: TestBrowser, pool: string) {
  const li = b.page.locator(`#legend li[data-pool="${pool}"]`);
  return {
    colour: (await li.getAttribute("data-colour")) ?? "missing",
    muted: (await li.getAttribute("data-muted")) ?? "missing",
  };
}

/** The fill attribute of a country's shape. */
export const fillOf = (b: TestBrowser, cc: string) =>
  b.page.locator(`#c-${cc}`).getAttribute("fill");
