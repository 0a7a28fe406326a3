import { createRequire } from "node:module";
import { type GeoPermissibleObjects, geoEqualEarth, geoGraticule, geoPath } from "d3-geo";
import type { Feature, FeatureCollection, Geometry, MultiPolygon, Polygon } from "geojson";
import countries from "i18n-iso-countries";
import { feature } from "topojson-client";
import { presimplify, quantile, simplify, sphericalTriangleArea } from "topojson-simplify";
import type { GeometryCollection, Topology } from "topojson-specification";

const require = createRequire(import.meta.url);

/** The SVG's user-space width; its height follows from the projection. */
export const MAP_WIDTH = 1000;
/** Share of the 1:50m arc points kept: plenty at ~1000 px, a seventh of the bytes. */
const KEEP = 0.1;
/** A country whose projected area (user units²) is below this also gets a dot. */
const SMALL_AREA = 10;
/** Natural Earth's Antarctica: routing-wise a list entry, map-wise half the height. */
const ANTARCTICA = "010";

/** One drawn country: its ISO alpha-2 code (null when Natural Earth gives none) and its path. */
export interface WorldShape {
  readonly cc: string | null;
  readonly name: string;
  readonly d: string;
  readonly area: number;
  /** Where a dot goes for a small country: the centroid of its largest polygon. */
  readonly dot: readonly [number, number] | null;
}

/** The projected world: shapes in user units, plus the sphere outline and graticule. */
export interface WorldMap {
  readonly width: number;
  readonly height: number;
  readonly shapes: readonly WorldShape[];
  readonly sphere: string;
  readonly graticule: string;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

function largestPolygon(geometry: Geometry, area: (g: GeoPermissibleObjects) => number): Polygon {
  if (geometry.type === "Polygon") return geometry;
  const multi = geometry as MultiPolygon;
  let best: Polygon = { type: "Polygon", coordinates: multi.coordinates[0] ?? [] };
  let bestArea = -1;
  for (const coordinates of multi.coordinates) {
    const p: Polygon = { type: "Polygon", coordinates };
    const a = area(p);
    if (a > bestArea) [best, bestArea] = [p, a];
  }
  return best;
}

/**
 * Projects Natural Earth's 1:50m countries (the `world-atlas` package) with Equal Earth into SVG
 * paths, maps each feature's ISO 3166-1 numeric id to alpha-2 with `i18n-iso-countries`, and
 * marks the countries too small to see (they get a dot the page can show).
 */
export function projectWorld(): WorldMap {
  const raw = require("world-atlas/countries-50m.json") as Topology<{
    countries: GeometryCollection<{ name: string }>;
  }>;
  const weighted = presimplify(structuredClone(raw), sphericalTriangleArea);
  const topo = simplify(weighted, quantile(weighted, KEEP));
  const all = feature(topo, topo.objects.countries) as FeatureCollection<
    Geometry,
    { name: string }
  >;
  const features = all.features.filter((f) => f.id !== ANTARCTICA);
  const land: FeatureCollection = { type: "FeatureCollection", features };
  const projection = geoEqualEarth().fitWidth(MAP_WIDTH, land);
  const path = geoPath(projection).digits(1);
  const [[, top], [, bottom]] = path.bounds(land);
  // Keep the graticule's and sphere's edges inside the viewBox after shifting to y = 0.
  projection.translate([projection.translate()[0], projection.translate()[1] - top + 2]);
  const height = Math.ceil(bottom - top + 4);

  const shapes = features.map((f: Feature<Geometry, { name: string }>): WorldShape => {
    const numeric = typeof f.id === "string" ? f.id : undefined;
    const cc = numeric ? (countries.numericToAlpha2(numeric) ?? null) : null;
    const area = path.area(f);
    let dot: [number, number] | null = null;
    if (cc && area < SMALL_AREA) {
      const [x, y] = path.centroid(largestPolygon(f.geometry, (g) => path.area(g)));
      if (Number.isFinite(x) && Number.isFinite(y)) dot = [round1(x), round1(y)];
    }
    return {
      cc,
      name: cc ? (countries.getName(cc, "en") ?? f.properties.name) : f.properties.name,
      d: path(f) ?? "",
      area,
      dot,
    };
  });
  return {
    width: MAP_WIDTH,
    height,
    shapes: shapes.filter((s) => s.d !== ""),
    sphere: path({ type: "Sphere" }) ?? "",
    graticule: geoPath(projection).digits(0)(geoGraticule().step([20, 20])()) ?? "",
  };
}
