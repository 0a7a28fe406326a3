import { Command } from "commander";
import { EtcdLeaseInvalidError } from "etcd3";
import { routingKeys } from "../../core/index.js";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { withEtcd } from "../etcd-client.js";
import { ExitCode } from "../exit-codes.js";
import { parseTargetArgument } from "../target-argument.js";
import { leaseHex } from "./boost.js";

/** `edgectl unboost CC`: revokes the override's lease (or deletes a lease-less override). */
export function unboostCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("unboost"))
    .description("end a boost now: revoke the lease of override/CC")
    .argument("<cc>", "country code or _default")
    .action(async (raw: string, _opts: unknown, cmd: Command) => {
      const cc = parseTargetArgument(raw).name;
      const settings = ctx.settings(cmd);
      const key = routingKeys(settings.prefix).override(cc);
      await withEtcd(settings, async (client) => {
        const res = await client.get(key).exec();
        const kv = res.kvs[0];
        if (!kv) {
          ctx.print(`override/${cc} does not exist: nothing to do`);
          return;
        }
        if (kv.lease !== "0") {
          try {
            await client.leaseClient.leaseRevoke({ ID: kv.lease });
            ctx.print(`override/${cc} removed: lease ${leaseHex(kv.lease)} revoked`);
            return;
          } catch (e) {
            if (!(e instanceof EtcdLeaseInvalidError)) throw e;
            // the lease expired between the read and the revoke; delete whatever is left
          }
        }
        // only delete the version we read, so a boost written meanwhile survives
        await client
          .if(key, "Mod", "==", Number(kv.mod_revision))
          .then(client.delete().key(key))
          .commit();
        ctx.print(`override/${cc} removed (it had no lease)`);
      });
      ctx.exit(ExitCode.ok);
    });
}
