import type { ContinentCode } from "../contract/continents.js";
import type { ContinentOverride } from "../intent/routing-state.js";
import type { OverrideRule } from "../intent/schema.js";

/**
 * The valid continent overrides under a prefix, by continent and then by key relative to the
 * prefix (several keys may override one continent: the greatest key wins).
 */
export class ContinentOverrideKeys {
  private byContinent = new Map<ContinentCode, Map<string, OverrideRule>>();

  set(continent: ContinentCode, rel: string, rule: OverrideRule): void {
    const byRel = this.byContinent.get(continent) ?? new Map<string, OverrideRule>();
    byRel.set(rel, rule);
    this.byContinent.set(continent, byRel);
  }

  delete(continent: ContinentCode, rel: string): void {
    const byRel = this.byContinent.get(continent);
    byRel?.delete(rel);
    if (byRel?.size === 0) this.byContinent.delete(continent);
  }

  clear(): void {
    this.byContinent = new Map();
  }

  /** As a key-sorted read yields them: ordered by each continent's first valid key, the last wins. */
  resolved(): Map<ContinentCode, ContinentOverride> {
    const picks: [string, ContinentCode, ContinentOverride][] = [];
    for (const [k, byRel] of this.byContinent) {
      const rels = [...byRel.keys()].sort();
      const first = rels[0];
      const last = rels[rels.length - 1];
      const rule = last === undefined ? undefined : byRel.get(last);
      if (first !== undefined && last !== undefined && rule)
        picks.push([first, k, { key: last, rule }]);
    }
    picks.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return new Map(picks.map(([, k, o]) => [k, o]));
  }
}
