import type { CountrySteering } from "../explain/country-steering.js";

/** `explain CC --steering FORMAT` as text: each share of viewers and its manifest. */
export function formatSteering(s: CountrySteering, revision: number): string[] {
  const head = `${s.country} at revision ${revision}: the ${s.format} steering manifest its viewers get (an isolate that ejected no origin)`;
  if (s.shares.length === 0)
    return [head, "none: no pool lies inside its fence, the edge answers 503 with Retry-After"];
  const lines = [head];
  for (const share of s.shares) {
    lines.push(`viewers picking ${share.pool} (weight ${share.weight}):`);
    lines.push(
      ...JSON.stringify(share.manifest, null, 2)
        .split("\n")
        .map((l) => `  ${l}`),
    );
  }
  return lines;
}
