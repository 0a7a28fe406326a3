import type { WorldMap, WorldShape } from "./world-map.js";

/** Escapes text for an HTML/SVG attribute or text node. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** The largest shape of each code: it takes focus and carries the id; the others are parts. */
function primaries(shapes: readonly WorldShape[]): Map<string, WorldShape> {
  const out = new Map<string, WorldShape>();
  for (const s of shapes) {
    if (!s.cc) continue;
    const best = out.get(s.cc);
    if (!best || s.area > best.area) out.set(s.cc, s);
  }
  return out;
}

/**
 * The map as inline SVG: one path per country (`#c-DE`, focusable, `data-cc`), grey paths for the
 * few Natural Earth features without an ISO code, a dot per small country (`#d-SG`, shown by the
 * page when the country has a rule of its own), and empty layers the page fills with degraded
 * marks and the focus ring. Colours are left to the page.
 */
export function mapMarkup(world: WorldMap): string {
  const main = primaries(world.shapes);
  const sorted = [...world.shapes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const paths: string[] = [];
  const dots: string[] = [];
  for (const s of sorted) {
    const name = escapeHtml(s.name);
    if (!s.cc) {
      paths.push(
        `<path class="shape nocode" d="${s.d}"><title>${name} (no ISO code)</title></path>`,
      );
      continue;
    }
    const label = `${name} (${s.cc})`;
    if (main.get(s.cc) !== s) {
      paths.push(`<path class="shape part" data-cc="${s.cc}" d="${s.d}"/>`);
      continue;
    }
    const focusable = s.dot ? "" : ` tabindex="0" role="button" aria-label="${label}"`;
    paths.push(`<path class="shape" id="c-${s.cc}" data-cc="${s.cc}"${focusable} d="${s.d}"/>`);
    if (s.dot) {
      const [x, y] = s.dot;
      dots.push(
        `<circle class="dot" id="d-${s.cc}" data-cc="${s.cc}" cx="${x}" cy="${y}" r="4" tabindex="0" role="button" aria-label="${label}"/>`,
      );
    }
  }
  return [
    `<svg id="map" viewBox="0 0 ${world.width} ${world.height}" role="group" aria-label="World map: every country filled with the colour of the pool that serves it">`,
    "<defs>",
    '<pattern id="hatch" patternUnits="userSpaceOnUse" width="5" height="5" patternTransform="rotate(45)">',
    '<rect class="hatch-line" width="2" height="5"/>',
    "</pattern>",
    "</defs>",
    `<path class="sphere" d="${world.sphere}"/>`,
    `<path class="graticule" d="${world.graticule}"/>`,
    `<g id="shapes">${paths.join("")}</g>`,
    '<g id="marks"></g>',
    `<g id="dots">${dots.join("")}</g>`,
    '<g id="ring"></g>',
    "</svg>",
  ].join("\n");
}
