import { z } from "zod";

/** `edgectl explain CC --steering hls|dash -o json`: the steering manifests its viewers get. */
export const SteeringShape = z
  .object({
    kind: z.literal("steering"),
    country: z.string().describe("CC or _default"),
    revision: z.number().int().describe("the etcd revision explained"),
    format: z.enum(["hls", "dash"]),
    shares: z
      .array(
        z.object({
          pool: z.string().describe("the pool their sticky keys pick first"),
          weight: z.number().describe("its weight in the split; 100 without one"),
          manifest: z
            .record(z.string(), z.unknown())
            .describe("exactly what /__edge/steer/FORMAT answers them (docs/reference.md §15)"),
        }),
      )
      .describe("one per share of viewers; empty when the edge answers 503 (fence unsatisfiable)"),
  })
  .describe("explain CC --steering: the steering manifest a viewer of CC gets now");

/** The parsed `explain --steering` result. */
export type SteeringResult = z.output<typeof SteeringShape>;
