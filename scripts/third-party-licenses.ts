import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Metafile } from "esbuild";

interface PackageManifest {
  name?: string;
  version?: string;
  license?: string;
}

/**
 * The text of `dist/THIRD_PARTY_LICENSES`: for every npm package the build bundled (the
 * `node_modules/…` inputs of esbuild's metafile), its name, version, declared license and the
 * text of its LICENSE/LICENCE/COPYING file, sorted by name.
 */
export function thirdPartyLicenses(root: string, metafile: Metafile): string {
  const dirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match?.[1]) dirs.add(join(root, match[1]));
  }
  const sections = [...dirs].flatMap((dir) => {
    const manifestPath = join(dir, "package.json");
    if (!existsSync(manifestPath)) return [];
    const pkg = JSON.parse(readFileSync(manifestPath, "utf8")) as PackageManifest;
    const file = readdirSync(dir).find((name) => /^(licen[cs]e|copying)(\.|$)/i.test(name));
    const text = file ? readFileSync(join(dir, file), "utf8").trim() : "(no license file shipped)";
    return [{ name: pkg.name ?? dir, head: `${pkg.name}@${pkg.version} (${pkg.license})`, text }];
  });
  sections.sort((a, b) => a.name.localeCompare(b.name));
  const rule = "-".repeat(72);
  return `${[
    "Third-party software bundled into this directory by scripts/build.ts:",
    ...sections.map((s) => `${rule}\n${s.head}\n\n${s.text}`),
  ].join("\n\n")}\n`;
}
