import {
  type ModelPricing,
  mcpHeaderSealContext,
  type Snapshot,
  type SnapshotApiKey,
  type SnapshotMcpServer,
  type SnapshotProject,
  type SnapshotProvider,
  type SnapshotWorkflow,
  unseal,
} from '#contract';
import { authFor } from '../providers/auth/index.ts';
import { getAdapter } from '../providers/registry.ts';
import type { UpstreamAuth, UpstreamTarget } from '../providers/types.ts';

/**
 * The gateway's in-memory form of a snapshot: everything a request needs is one Map lookup away,
 * credentials are unsealed once per snapshot (never per request), expiry instants are numbers.
 */
export interface RuntimeSlot {
  /** `primary`, `backup-1`, ... (spend caps address slots by this name). */
  slot: string;
  /** 0 for the primary, the backup position otherwise. */
  position: number;
  provider: string;
  model: string;
  target: UpstreamTarget;
  pricing: ModelPricing | undefined;
}

export interface RuntimeWorkflow {
  config: SnapshotWorkflow;
  slots: RuntimeSlot[];
  backups: { position: number; provider: string; model: string }[];
}

export interface RuntimeProject {
  config: SnapshotProject;
  workflows: Map<string, RuntimeWorkflow>;
  /** Providers of the project's namespace with their targets, for provider+model requests. */
  providers: Map<string, { config: SnapshotProvider; targetFor(model: string): UpstreamTarget }>;
  /**
   * Webhook receivers with their secrets unsealed (once per snapshot, like provider credentials);
   * two secrets while one rotates (the Secret holds both, new first), one otherwise.
   */
  webhooks: { url: string; secrets: string[]; events: readonly string[] }[];
  /** Guardrail webhook rules' signing secrets, unsealed, by `<guardrail>/<rule>`. */
  guardrailSecrets?: Map<string, string[]>;
  /** The project's MCP servers with the headers sent to them unsealed (once per snapshot). */
  mcpServers: Map<string, { config: SnapshotMcpServer; headers: Record<string, string> }>;
}

export interface RuntimeKey extends SnapshotApiKey {
  notAfterMs: number;
}

export interface Runtime {
  version: string;
  generatedAt: string;
  projects: Map<string, RuntimeProject>;
  keys: Map<string, RuntimeKey>;
}

function makeTarget(
  p: SnapshotProvider,
  secret: string,
  auth: UpstreamAuth | undefined,
  model: string,
): UpstreamTarget {
  const options: NonNullable<UpstreamTarget['options']> = {};
  if (p.apiVersion) options.apiVersion = p.apiVersion;
  if (p.region) options.region = p.region;
  if (p.project) options.project = p.project;
  return {
    providerName: p.name,
    type: p.type,
    baseURL: p.baseURL,
    // Only an API key goes out as one; other credentials stay with `auth`.
    apiKey: p.auth.method === 'api-key' ? secret : '',
    model,
    // A model that cannot stream is answered as one chunk, like a provider that cannot.
    streaming: p.streaming && p.models[model]?.streaming !== false,
    timeouts: p.timeouts,
    ...(auth ? { auth } : {}),
    ...(Object.keys(options).length > 0 ? { options } : {}),
  };
}

export function buildRuntime(snapshot: Snapshot, sealKey: Buffer): Runtime {
  const projects = new Map<string, RuntimeProject>();
  const types = new Set<SnapshotProvider['type']>();
  for (const project of Object.values(snapshot.projects)) {
    const namespace = project.id.slice(0, project.id.indexOf('.'));
    const providers: RuntimeProject['providers'] = new Map();
    for (const p of Object.values(project.providers)) {
      const secret = p.credential ? unseal(sealKey, `provider:${namespace}/${p.name}`, p.credential) : '';
      const auth = authFor(`${namespace}/${p.name}`, p, secret);
      providers.set(p.name, { config: p, targetFor: (model) => makeTarget(p, secret, auth, model) });
      types.add(p.type);
    }
    const workflows = new Map<string, RuntimeWorkflow>();
    for (const wf of Object.values(project.workflows)) {
      const slots: RuntimeSlot[] = [wf.primary, ...wf.backups].map((t, position) => {
        const provider = providers.get(t.provider);
        // The compiler only admits workflows whose providers exist; a hand-made snapshot may not.
        if (!provider) throw new Error(`snapshot: workflow ${wf.name} names unknown provider ${t.provider}`);
        return {
          slot: position === 0 ? 'primary' : `backup-${position}`,
          position,
          provider: t.provider,
          model: t.model,
          target: provider.targetFor(t.model),
          pricing: provider.config.models[t.model]?.pricing,
        };
      });
      workflows.set(wf.name, {
        config: wf,
        slots,
        backups: wf.backups.map((b, i) => ({ position: i + 1, provider: b.provider, model: b.model })),
      });
    }
    const webhooks = project.webhooks.map((w) => ({
      url: w.url,
      secrets: unseal(sealKey, `webhook:${project.id}:${w.url}`, w.secret)
        .split(/\s+/)
        .filter((x) => x.length > 0),
      events: w.events,
    }));
    const guardrailSecrets = new Map<string, string[]>();
    for (const g of Object.values(project.guardrails))
      for (const r of g.rules)
        if (r.detector.type === 'webhook' && r.detector.secret)
          guardrailSecrets.set(
            `${g.name}/${r.name}`,
            unseal(sealKey, `guardrail:${project.id}:${g.name}/${r.name}`, r.detector.secret)
              .split(/\s+/)
              .filter((x) => x.length > 0),
          );
    const mcpServers: RuntimeProject['mcpServers'] = new Map();
    for (const m of Object.values(project.mcpServers)) {
      const headers: Record<string, string> = {};
      for (const h of m.headers)
        headers[h.name] = unseal(sealKey, mcpHeaderSealContext(project.id, m.name, h.name), h.value);
      mcpServers.set(m.name, { config: m, headers });
    }
    projects.set(project.id, {
      config: project,
      workflows,
      providers,
      webhooks,
      mcpServers,
      guardrailSecrets,
    });
  }
  // Adapters with libraries of their own load them now, not on a first request (and never for a
  // snapshot without such a provider). A failed load is retried, and reported, by that request.
  for (const type of types)
    getAdapter(type)
      .warm?.()
      .catch(() => undefined);
  const keys = new Map<string, RuntimeKey>();
  for (const [hash, k] of Object.entries(snapshot.apiKeys)) {
    keys.set(hash, { ...k, notAfterMs: k.notAfter ? Date.parse(k.notAfter) : Number.POSITIVE_INFINITY });
  }
  return { version: snapshot.version, generatedAt: snapshot.generatedAt, projects, keys };
}
