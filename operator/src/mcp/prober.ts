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
  at: Date;
  /** What the probe depended on: a change (URL, credential, timeout, SSRF rule) probes again at once. */
  configKey: string;
}

export interface McpProberOptions {
  sealKey: Buffer;
  /** How often every server is probed again while its configuration stays the same. */
  intervalMs: number;
  /** Probes in flight at once. */
  concurrency?: number;
  probe?: (target: ProbeTarget) => Promise<ProbeResult>;
}

const DEFAULT_CONCURRENCY = 8;

/**
 * Probes the MCP servers of a published snapshot (exactly what gateways serve: URL, sealed
 * credential, timeout and the project's SSRF rule) and keeps the last result of each. Level-based:
 * every refresh looks at the whole snapshot, probes what is new, changed or due, and forgets what
 * is gone.
 */
export class McpProber {
  readonly #o: McpProberOptions;
  readonly #last = new Map<string, McpProbe>();
  /** Probes run (tests and metrics read it). */
  probes = 0;

  constructor(o: McpProberOptions) {
    this.#o = o;
  }

  get(source: string): McpProbe | undefined {
    return this.#last.get(source);
  }

  /** Returns whether any result changed (or appeared, or went away). */
  async refresh(snapshot: Snapshot, now: Date): Promise<boolean> {
    const due: { source: string; target: ProbeTarget; server: SnapshotMcpServer; configKey: string }[] = [];
    const present = new Set<string>();
    for (const project of Object.values(snapshot.projects))
      for (const server of Object.values(project.mcpServers)) {
        present.add(server.source);
        const privateOk = project.allowPrivateNetworks || server.allowPrivateNetworks === true;
        const target = this.#target(project.id, privateOk, server);
        const configKey = sha256Hex(canonicalJson([server.url, server.headers, server.timeoutMs, privateOk]));
        const last = this.#last.get(server.source);
        const fresh =
          last && last.configKey === configKey && now.getTime() - last.at.getTime() < this.#o.intervalMs;
        if (!fresh) due.push({ source: server.source, target, server, configKey });
      }
    let changed = false;
    for (const source of this.#last.keys())
      if (!present.has(source)) {
        this.#last.delete(source);
        changed = true;
      }
    if (due.length === 0) return changed;
    // The MCP client (and undici's fetch) load with the first server to probe, in a chunk of their own.
    const probe = this.#o.probe ?? (await import('./probe.ts')).probeMcpServer;
    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        const d = due[next++];
        if (!d) return;
        this.probes++;
        const result = await probe(d.target);
        const offered = result.ok
          ? result.toolNames.filter((n) => toolOffered(n, d.server.allowTools, d.server.denyTools)).length
          : undefined;
        const before = this.#last.get(d.source);
        if (!before || canonicalJson([before.result, before.offered]) !== canonicalJson([result, offered]))
          changed = true;
        this.#last.set(d.source, { result, offered, at: now, configKey: d.configKey });
      }
    };
    await Promise.all(Array.from({ length: this.#o.concurrency ?? DEFAULT_CONCURRENCY }, worker));
    return changed;
  }

  #target(projectId: string, allowPrivateNetworks: boolean, s: SnapshotMcpServer): ProbeTarget {
    const headers: Record<string, string> = {};
    for (const h of s.headers)
      headers[h.name] = unseal(this.#o.sealKey, mcpHeaderSealContext(projectId, s.name, h.name), h.value);
    return { url: s.url, headers, timeoutMs: s.timeoutMs, allowPrivateNetworks };
  }
}
