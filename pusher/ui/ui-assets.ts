import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One file the pusher serves under `/ui`. */
export interface UiAsset {
  readonly body: Buffer;
  readonly type: string;
}

/** The page's files by URL path. */
export type UiAssets = ReadonlyMap<string, UiAsset>;

// From source this module sits beside page/ and assets/; bundled, it is in dist/ or dist/chunks/
// and the build copies them to dist/ui/.
const base =
  ["./", "../ui/", "./ui/"]
    .map((dir) => new URL(dir, import.meta.url))
    .find((dir) => existsSync(new URL("page/index.html", dir))) ?? new URL("./", import.meta.url);
const here = (rel: string) => fileURLToPath(new URL(rel, base));
const read = (rel: string) => readFileSync(here(rel), "utf8");

/**
 * Reads the page: its HTML (with the generated world map and country list put in), CSS, script
 * and icon. Everything comes from this directory, so the page makes no request elsewhere; the
 * generated files are committed (`pusher/ui/build/build-assets.ts`), so no build tool is needed
 * where the pusher runs.
 */
export function loadUiAssets(): UiAssets {
  const html = read("page/index.html")
    .replace("{{MAP}}", () => read("assets/world.svg").trimEnd())
    // JSON inside <script type="application/json">: `<` escaped so no `</script>` can appear.
    .replace('"@countries"', () =>
      read("assets/countries.json").trimEnd().replaceAll("<", "\\u003c"),
    );
  return new Map<string, UiAsset>([
    ["/ui", { body: Buffer.from(html), type: "text/html; charset=utf-8" }],
    ["/ui/app.css", { body: Buffer.from(read("page/app.css")), type: "text/css; charset=utf-8" }],
    [
      "/ui/panels.css",
      { body: Buffer.from(read("page/panels.css")), type: "text/css; charset=utf-8" },
    ],
    [
      "/ui/app.js",
      { body: Buffer.from(read("assets/app.js")), type: "text/javascript; charset=utf-8" },
    ],
    ["/ui/favicon.svg", { body: Buffer.from(read("page/favicon.svg")), type: "image/svg+xml" }],
  ]);
}
