/** One documented variable: what `--help` prints and docs/reference.md's variable tables show. */
export interface EnvVarDoc {
  /** One name, or several that go together (`"ETCD_USERNAME, ETCD_PASSWORD"`). */
  readonly name: string;
  /** The default as a value (`"900"`), or a phrase such as `"unset"`. */
  readonly default: string;
  /** One line for `--help`; the table's meaning starts with it. */
  readonly meaning: string;
  /** More for the reference's table only (Markdown). */
  readonly details?: string;
}
