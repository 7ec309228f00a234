import {
  canonicalJson,
  mcpHeaderSealContext,
  type Snapshot,
  type SnapshotMcpServer,
  sha256Hex,
  unseal,
} from '#contract';
import { toolOffered } from './globs.ts';
import type { ProbeResult, ProbeTarget } from './probe.ts';

/** The last probe of one MCPServer, keyed in the prober by its `<namespace>/<name>`. */
export interface McpProbe {
  result: ProbeResult;
  /** Tools offered after allowTools/denyTools (successful probes only). */
  offered: number | undefined;
  /**
   * The first probe that found this result: later probes finding the same leave it (and so the
   * status) alone, so a quiet cluster gets no status writes.
   */
  at: Date;
  /** The latest probe, found the same or not: what "due again" counts from. */
  checkedAt: Date;
  /** What the probe depended on: a change (URL, credential, timeout, SSRF rule) probes again at once. */
  configKey: string;
}

export interface McpProberOptions {
  sealKey: Buffer;
  /** How often every server is probed again while its configuration stays the same. */
  intervalMs: number;
  probe?: (target: ProbeTarget) => Promise<ProbeResult>;
}

/**
 * Probes the MCP servers of a published snapshot (exactly what gateways serve: URL, sealed
 * credential, timeout and the project's SSRF rule) and keeps the last result of each. Level-based:
 * every refresh looks at the whole snapshot, probes what is new, changed or due, and forgets what
 * is gone.
 */
export class McpProber {
  readonly #o: McpProberOptions;
  readonly #last = new Map<string, McpProbe>();
  /** Servers being probed: at most one probe per server at a time. */
  readonly #inFlight = new Set<string>();
  /** Probes run (tests and metrics read it). */
  probes = 0;

  constructor(o: McpProberOptions) {
    this.#o = o;
  }

  get(source: string): McpProbe | undefined {
    return this.#last.get(source);
  }

  /**
   * Starts a probe of every server of the snapshot that is new, changed or due and not being probed
   * already, and forgets servers that are gone. Probes run on their own, so a hanging server holds
   * up neither the caller (the controller's queue, which publishes snapshots) nor the other
   * servers; `done` runs after each one. The promise settles when the probes started here have.
   */
  async run(snapshot: Snapshot, now: () => Date, done: () => void): Promise<void> {
    const present = new Set<string>();
    const due: { server: SnapshotMcpServer; target: () => ProbeTarget; configKey: string }[] = [];
    const at = now().getTime();
    for (const project of Object.values(snapshot.projects))
      for (const server of Object.values(project.mcpServers)) {
        present.add(server.source);
        const privateOk = project.allowPrivateNetworks || server.allowPrivateNetworks === true;
        const configKey = sha256Hex(canonicalJson([server.url, server.headers, server.timeoutMs, privateOk]));
        const last = this.#last.get(server.source);
        const fresh =
          last && last.configKey === configKey && at - last.checkedAt.getTime() < this.#o.intervalMs;
        if (!fresh && !this.#inFlight.has(server.source))
          due.push({ server, target: () => this.#target(project.id, privateOk, server), configKey });
      }
    let forgot = false;
    for (const source of this.#last.keys())
      if (!present.has(source)) {
        this.#last.delete(source);
        forgot = true;
      }
    if (forgot) done();
    if (due.length === 0) return;
    for (const d of due) this.#inFlight.add(d.server.source);
    // The MCP client (and undici's fetch) load with the first server to probe, in a chunk of their own.
    const probe = this.#o.probe ?? (await import('./probe.ts')).probeMcpServer;
    await Promise.all(
      due.map(async ({ server, target, configKey }) => {
        try {
          this.probes++;
          const result = await probe(target());
          const offered = result.ok
            ? result.toolNames.filter((n) => toolOffered(n, server.allowTools, server.denyTools)).length
            : undefined;
          const checkedAt = now();
          const before = this.#last.get(server.source);
          const same =
            before?.configKey === configKey &&
            canonicalJson([before.result, before.offered]) === canonicalJson([result, offered]);
          // Deleted meanwhile? The next run forgets it again (done() asks for one).
          this.#last.set(server.source, {
            result,
            offered,
            at: same ? before.at : checkedAt,
            checkedAt,
            configKey,
          });
        } finally {
          this.#inFlight.delete(server.source);
          done();
        }
      }),
    );
  }

  #target(projectId: string, allowPrivateNetworks: boolean, s: SnapshotMcpServer): ProbeTarget {
    const headers: Record<string, string> = {};
    for (const h of s.headers)
      headers[h.name] = unseal(this.#o.sealKey, mcpHeaderSealContext(projectId, s.name, h.name), h.value);
    return { url: s.url, headers, timeoutMs: s.timeoutMs, allowPrivateNetworks };
  }
}
