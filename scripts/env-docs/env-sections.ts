import { EDGECTL_ENV } from "../../edgectl/cli/edgectl-env.js";
import { PUSHER_ENV } from "../../pusher/config.js";
import { WORKER_VARS } from "../../worker/worker-vars.js";
import {
  renderEnvTable,
  renderWorkerTable,
  replaceBetween,
  type TableMarkers,
} from "./env-table.js";

/** One generated table of docs/reference.md: its markers and its text from code. */
export interface EnvSection {
  readonly markers: TableMarkers;
  readonly table: () => string;
}

function markers(name: string, source: string): TableMarkers {
  return {
    begin: `<!-- ${name}:begin (npm run docs:env writes this table from ${source}) -->`,
    end: `<!-- ${name}:end -->`,
  };
}

/** The Worker's (§4), the pusher's (§5) and edgectl's (§6) variable tables. */
export const ENV_SECTIONS: readonly EnvSection[] = [
  {
    markers: markers("worker-vars", "worker/worker-vars.ts"),
    table: () => renderWorkerTable(WORKER_VARS),
  },
  { markers: markers("pusher-env", "pusher/config.ts"), table: () => renderEnvTable(PUSHER_ENV) },
  {
    markers: markers("edgectl-env", "edgectl/cli/edgectl-env.ts"),
    table: () => renderEnvTable(EDGECTL_ENV),
  },
];

/** docs/reference.md's text with every variable table rewritten from code. */
export function replaceEnvSections(markdown: string): string {
  return ENV_SECTIONS.reduce((doc, s) => replaceBetween(doc, s.markers, s.table()), markdown);
}
