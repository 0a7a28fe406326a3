import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page, type Request } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`, done by scripts/ensure-deps.sh). */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Launch flags: headless, no sandbox (tests run as root), and none of Chromium's own background
 * traffic (component updates, sync, QUIC probes), which this closed network refuses.
 */
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless Chromium with a fresh profile, and every request and console error it saw. */
export interface TestBrowser {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Every request the page made, in order. */
  readonly requests: string[];
  /** Requests to anything but loopback (each one fails a test). */
  readonly offLoopback: string[];
  /** Console errors and uncaught page errors. */
  readonly errors: string[];
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** True for a URL served from this machine's loopback (or the page's own data: / about: URLs). */
export function isLoopback(url: string): boolean {
  const u = new URL(url);
  if (u.protocol === "about:" || u.protocol === "data:" || u.protocol === "blob:") return true;
  return LOOPBACK.has(u.hostname) || u.hostname.startsWith("127.");
}

/** Starts Chromium on a fresh profile directory; requests off loopback are recorded and aborted. */
export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} not found: the browser tests need Debian's chromium (bash scripts/ensure-deps.sh installs it as root, or: apt-get install chromium)`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), "edge-ui-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    // Playwright passes the fresh profile as --user-data-dir itself.
    args: ARGS,
    viewport,
    deviceScaleFactor: 1,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const requests: string[] = [];
  const offLoopback: string[] = [];
  const errors: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (isLoopback(url)) return route.continue();
    offLoopback.push(url);
    return route.abort("blockedbyclient");
  });
  const onRequest = (r: Request) => requests.push(r.url());
  context.on("request", onRequest);
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  return {
    context,
    page,
    requests,
    offLoopback,
    errors,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
