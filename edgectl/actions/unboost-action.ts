import type { Command } from "commander";
import { EtcdLeaseInvalidError } from "etcd3";
import { leaseHex } from "../../adapters/cluster-lease.js";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { routingKeys } from "../../core/index.js";
import { ExitCode } from "../cli/exit-codes.js";
import { parseTargetArgument } from "../cli/target-argument.js";
import type { CommandContext } from "../output/command-context.js";
import { UnboostShape } from "../output/shapes/unboost-shape.js";

/** `edgectl unboost`'s action (`edgectl/commands/unboost.ts` defines its arguments and options). */
export async function unboostAction(
  ctx: CommandContext,
  raw: string,
  _opts: unknown,
  cmd: Command,
): Promise<void> {
  const cc = parseTargetArgument(raw).name;
  const settings = ctx.settings(cmd);
  const key = routingKeys(settings.prefix).override(cc);
  const done = (outcome: "revoked" | "deleted" | "absent", lease: string | null, text: string) =>
    ctx.emit(
      { key: `override/${cc}`, outcome, lease },
      { schema: UnboostShape, text: () => [text] },
    );
  await withEtcdMembers(settings, async (members) => {
    const res = await members.any(`read override/${cc}`, (c, call) =>
      c.get(key).options(call).exec(),
    );
    const kv = res.kvs[0];
    if (!kv) {
      done("absent", null, `override/${cc} does not exist: nothing to do`);
      return;
    }
    if (kv.lease !== "0") {
      // a revoke sent again, or of a lease that expired meanwhile, finds it gone: the same end
      await members.any(`revoke lease ${leaseHex(kv.lease)}`, (c, call) =>
        c.leaseClient.leaseRevoke({ ID: kv.lease }, call).catch((e: unknown) => {
          if (!(e instanceof EtcdLeaseInvalidError)) throw e;
        }),
      );
      done(
        "revoked",
        leaseHex(kv.lease),
        `override/${cc} removed: lease ${leaseHex(kv.lease)} revoked`,
      );
      return;
    }
    // only delete the version we read, so a boost written meanwhile survives; sending it
    // again is safe for the same reason
    await members.any(`delete override/${cc}`, (c, call) =>
      c
        .if(key, "Mod", "==", Number(kv.mod_revision))
        .then(c.delete().key(key))
        .options(call)
        .commit(),
    );
    done("deleted", null, `override/${cc} removed (it had no lease)`);
  });
  ctx.exit(ExitCode.ok);
}
