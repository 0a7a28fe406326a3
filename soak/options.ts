import { parseArgs } from "node:util";

/** Leaks the soak can plant to prove it catches them. */
export const PLANTABLE_LEAKS = ["lease", "observed"] as const;
export type PlantedLeak = (typeof PLANTABLE_LEAKS)[number];

/** The soak's command line. */
export interface SoakOptions {
  readonly minutes: number;
  readonly quick: boolean;
  /** Where results.json and the plots go. */
  readonly out: string;
  readonly seed: number;
  readonly plantLeak: PlantedLeak | null;
  /**
   * Exit 0 only when the run fails on exactly these growth figures (and no other check):
   * the self-check that a planted leak is caught.
   */
  readonly expectFail: readonly string[];
  /**
   * Run the pushers and heartbeats with their units' `NODE_OPTIONS` (false: without
   * `--expose-gc`, so without the idle heap trim, to measure what the trim saves).
   */
  readonly heapTrim: boolean;
}

export const USAGE = `usage: npm run soak -- [--minutes N | --quick] [--out DIR] [--seed N]
                     [--plant-leak lease|observed] [--expect-fail FIGURE[,FIGURE]]
                     [--no-heap-trim]
  --minutes N        measured minutes (default 30)
  --quick            5 measured minutes (the CI run: under 6 minutes in all)
  --out DIR          where results.json and the plots go (default soak/out, ignored by git)
  --plant-leak lease keep one more etcd lease every minute (test only: the soak must fail)
  --plant-leak observed
                     leave observed/ keys on the observer's lease every 30 s, as an observer
                     that never deletes a pair's key would (test only: the soak must fail)
  --expect-fail F    exit 0 only if the no-growth test fails on exactly the figures F
  --no-heap-trim     the pushers and heartbeats without their units' --expose-gc: no idle heap
                     trim (to compare their memory with it)`;

/** Parses argv (without node and the script); throws a usage message on a bad option. */
export function parseSoakOptions(argv: readonly string[]): SoakOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: "string" },
      quick: { type: "boolean", default: false },
      out: { type: "string", default: "soak/out" },
      seed: { type: "string", default: "27" },
      "plant-leak": { type: "string" },
      "expect-fail": { type: "string" },
      "no-heap-trim": { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) throw new Error(USAGE);
  if (values.quick && values.minutes !== undefined)
    throw new Error(`--quick and --minutes exclude each other\n${USAGE}`);
  const minutes = values.quick ? 5 : Number(values.minutes ?? "30");
  if (!Number.isFinite(minutes) || minutes < 2)
    throw new Error(`--minutes: "${values.minutes}" must be a number ≥ 2\n${USAGE}`);
  const seed = Number(values.seed);
  if (!Number.isInteger(seed)) throw new Error(`--seed: "${values.seed}" must be an integer`);
  const leak = values["plant-leak"];
  if (leak !== undefined && !(PLANTABLE_LEAKS as readonly string[]).includes(leak))
    throw new Error(`--plant-leak: "${leak}" is not one of ${PLANTABLE_LEAKS.join(", ")}`);
  return {
    minutes,
    quick: values.quick ?? false,
    out: values.out ?? "soak/out",
    seed,
    plantLeak: (leak as PlantedLeak | undefined) ?? null,
    expectFail: values["expect-fail"]?.split(",").filter((f) => f !== "") ?? [],
    heapTrim: !values["no-heap-trim"],
  };
}
