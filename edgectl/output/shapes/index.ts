import type { z } from "zod";
import { ApplyShape } from "./apply-shape.js";
import { BoostShape } from "./boost-shape.js";
import { CanaryEndShape, CanaryStatusShape } from "./canary-shape.js";
import { CompletionShape } from "./completion-shape.js";
import { ErrorShape } from "./error-shape.js";
import { ExplainShape } from "./explain-shape.js";
import { ExportShape } from "./export-shape.js";
import { HeartbeatEventShape } from "./heartbeat-shape.js";
import { HistoryShape } from "./history-shape.js";
import { MoveShape } from "./move-shape.js";
import { ObserveEventShape } from "./observe-shape.js";
import { PlanShape } from "./plan-shape.js";
import { PurgeShape } from "./purge-shape.js";
import { RollbackShape } from "./rollback-shape.js";
import { StatusShape } from "./status-shape.js";
import { SteeringShape } from "./steering-shape.js";
import { TopShape } from "./top-shape.js";
import { UnboostShape } from "./unboost-shape.js";
import { ValidateShape } from "./validate-shape.js";

/** One documented `-o json` shape: the invocation it answers and its schema. */
export interface DocumentedShape {
  readonly invocation: string;
  readonly schema: z.ZodType;
}

/** Every command's `-o json` shape, in docs/reference.md's order (`npm run docs:cli-json`). */
export const CLI_SHAPES: readonly DocumentedShape[] = [
  { invocation: "edgectl validate FILE -o json", schema: ValidateShape },
  { invocation: "edgectl plan FILE -o json", schema: PlanShape },
  { invocation: "edgectl apply FILE --yes -o json", schema: ApplyShape },
  { invocation: "edgectl move CC[,CC…] --to POOL --yes -o json", schema: MoveShape },
  { invocation: "edgectl canary status -o json", schema: CanaryStatusShape },
  { invocation: "edgectl canary promote|abort -o json", schema: CanaryEndShape },
  { invocation: "edgectl history -o json", schema: HistoryShape },
  { invocation: "edgectl rollback EPOCH --yes -o json", schema: RollbackShape },
  { invocation: "edgectl export -o json", schema: ExportShape },
  { invocation: "edgectl explain CC|K -o json", schema: ExplainShape },
  { invocation: "edgectl explain CC --steering hls|dash -o json", schema: SteeringShape },
  { invocation: "edgectl boost CC --pool P --ttl D -o json", schema: BoostShape },
  { invocation: "edgectl unboost CC -o json", schema: UnboostShape },
  { invocation: "edgectl status -o json", schema: StatusShape },
  {
    invocation: "edgectl heartbeat POOL -o json (one line per event)",
    schema: HeartbeatEventShape,
  },
  {
    invocation: "edgectl observe --edge URL -o json (one line per event)",
    schema: ObserveEventShape,
  },
  { invocation: "edgectl purge URL… -o json", schema: PurgeShape },
  { invocation: "edgectl top [CC…] --edge URL -o json", schema: TopShape },
  { invocation: "edgectl completion SHELL -o json", schema: CompletionShape },
  { invocation: "any failure, -o json", schema: ErrorShape },
];
