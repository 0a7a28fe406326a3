import type { CompiledMap, Route } from "./compiled-map.js";

/** A request's country: two upper-case letters (or Cloudflare's `T1`), else `XX`. */
export function normalizeCountry(raw: unknown): string {
  if (typeof raw !== "string") return "XX";
  const cc = raw.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(cc) || cc === "T1" ? cc : "XX";
}

/** The route a country takes in a compiled map: its own, else the default. */
export function resolveRoute(map: CompiledMap, cc: string): Route {
  return Object.hasOwn(map.countries, cc) ? (map.countries[cc] ?? map.default) : map.default;
}
