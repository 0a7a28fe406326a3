import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { etcdBinary } from "../../testkit/etcd.js";
import { freePorts } from "../../testkit/ports.js";

const run = promisify(execFile);

/** A single-member etcd on loopback that speaks TLS and authenticates clients by certificate. */
export interface TlsEtcd {
  readonly endpoint: string;
  readonly caFile: string;
  /** A client certificate and key whose common name is `cn`, signed by the cluster's CA. */
  client(cn: string): Promise<{ readonly cert: string; readonly key: string }>;
  stop(): Promise<void>;
}

async function openssl(dir: string, ...args: string[]): Promise<void> {
  await run("openssl", args, { cwd: dir });
}

/** Writes `name.pem` and `name-key.pem` in `dir`, signed by `ca.pem`, for `cn` (and `san`). */
async function issue(dir: string, name: string, cn: string, san: string | null): Promise<void> {
  await openssl(
    dir,
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    `${name}-key.pem`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${cn}`,
  );
  const ext = join(dir, `${name}.ext`);
  await run("bash", [
    "-c",
    `printf '%s\\n' "$1" > "$2"`,
    "_",
    san
      ? `subjectAltName=${san}\nextendedKeyUsage=serverAuth,clientAuth`
      : "extendedKeyUsage=clientAuth",
    ext,
  ]);
  await openssl(
    dir,
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca-key.pem",
    "-CAcreateserial",
    "-days",
    "2",
    "-out",
    `${name}.pem`,
    "-extfile",
    ext,
  );
}

/**
 * Starts etcd (the matrix's, testkit/etcd.ts) on https://127.0.0.1 with `--client-cert-auth`:
 * a throwaway CA signs the server's certificate and every client's, and a client's common name
 * is its etcd user once auth is on.
 */
export async function startTlsEtcd(): Promise<TlsEtcd> {
  const dir = mkdtempSync(join(tmpdir(), "tls-etcd-"));
  await openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "ca-key.pem",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=test-ca",
  );
  await issue(dir, "server", "etcd-test", "IP:127.0.0.1");
  const [client, peer] = (await freePorts(2)) as [number, number];
  const endpoint = `https://127.0.0.1:${client}`;
  const caFile = join(dir, "ca.pem");
  const child: ChildProcess = spawn(
    etcdBinary(),
    [
      "--name",
      "tls",
      "--data-dir",
      join(dir, "data"),
      "--listen-client-urls",
      endpoint,
      "--advertise-client-urls",
      endpoint,
      "--listen-peer-urls",
      `http://127.0.0.1:${peer}`,
      "--initial-advertise-peer-urls",
      `http://127.0.0.1:${peer}`,
      "--initial-cluster",
      `tls=http://127.0.0.1:${peer}`,
      "--cert-file",
      join(dir, "server.pem"),
      "--key-file",
      join(dir, "server-key.pem"),
      "--client-cert-auth",
      "--trusted-ca-file",
      caFile,
      "--log-level",
      "error",
      "--logger",
      "zap",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stderr?.on("data", (d: Buffer) => {
    log += d.toString();
  });
  const issued = new Set<string>();
  const client_ = async (cn: string) => {
    if (!issued.has(cn)) {
      await issue(dir, `client-${cn}`, cn, null);
      issued.add(cn);
    }
    return { cert: join(dir, `client-${cn}.pem`), key: join(dir, `client-${cn}-key.pem`) };
  };
  const probe = await client_("health-probe");
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`TLS etcd exited:\n${log.slice(-2000)}`);
    const ok = await run("etcdctl", [
      "--endpoints",
      endpoint,
      "--cacert",
      caFile,
      "--cert",
      probe.cert,
      "--key",
      probe.key,
      "endpoint",
      "health",
    ]).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`TLS etcd never healthy:\n${log.slice(-2000)}`);
    await sleep(100);
  }
  return {
    endpoint,
    caFile,
    client: client_,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((r) => child.once("exit", () => r()));
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
