/** The rule `edgectl explain` walked: a country's, a continent's or an override's. */
export interface ExplainedRule {
  readonly primary: string;
  readonly fallbacks: readonly string[];
  readonly weights?: Readonly<Record<string, number>>;
  /** An override's reason. */
  readonly reason?: string;
}
