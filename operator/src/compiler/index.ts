import {
  canonicalJson,
  SNAPSHOT_SCHEMA_VERSION,
  type Snapshot,
  type SnapshotBody,
  type SnapshotProject,
  seal,
  sha256Hex,
} from '#contract';
import type {
  ApiKey,
  Guardrail,
  MCPServer,
  Project,
  Provider,
  SpendCap,
  SwitchyardObject,
  Workflow,
} from '../resources/index.ts';
import { compileApiKeys } from './apikeys.ts';
import { compileGuardrails } from './guardrails.ts';
import { compileMcpServers } from './mcpservers.ts';
import { compileProviders } from './providers.ts';
import { SecretIndex } from './secrets.ts';
import { compileSpendCaps } from './spendcaps.ts';
import { type CompileInput, projectIdOf, type Verdict } from './types.ts';
import { Verdicts } from './verdicts.ts';
import { webhookSecretProblem } from './webhooks.ts';
import { compileWorkflows } from './workflows.ts';

export {
  generatedKeySecretName,
  isWellFormedKey,
  PREVIOUS_KEY_FIELD,
  PREVIOUS_VALID_UNTIL_FIELD,
} from './apikeys.ts';
export * from './types.ts';

export interface CompileOutput {
  snapshot: Snapshot;
  verdicts: Verdict[];
}

/**
 * Written into every snapshot (the spec's zod schema has already applied the CRD defaults), so
 * gateways never fall back to the contract's default meant for snapshots of older operators.
 */
function compileRequestLogs(p: Project): SnapshotProject['requestLogs'] {
  const { bodies, maxEntries } = p.spec.requestLogs;
  return { bodies, maxEntries };
}

const ofKind = <K extends SwitchyardObject['kind']>(objects: readonly SwitchyardObject[], kind: K) =>
  objects.filter((o): o is Extract<SwitchyardObject, { kind: K }> => o.kind === kind);

/**
 * Pure: CR objects + Secrets → one versioned snapshot and a verdict per object. Invalid objects are
 * left out with a reason; everything valid still goes in, so one bad object never takes others down.
 */
export function compileSnapshot(input: CompileInput): CompileOutput {
  const verdicts = new Verdicts();
  const secrets = new SecretIndex(input.secrets);
  const projects: Project[] = ofKind(input.objects, 'Project');
  const providers: Provider[] = ofKind(input.objects, 'Provider');
  const workflows: Workflow[] = ofKind(input.objects, 'Workflow');
  const keys: ApiKey[] = ofKind(input.objects, 'ApiKey');
  const caps: SpendCap[] = ofKind(input.objects, 'SpendCap');
  const guards: Guardrail[] = ofKind(input.objects, 'Guardrail');
  const mcp: MCPServer[] = ofKind(input.objects, 'MCPServer');

  const projectIds = new Map<string, string>();
  for (const p of projects)
    projectIds.set(
      `${p.metadata.namespace}/${p.metadata.name}`,
      projectIdOf(p.metadata.namespace, p.metadata.name),
    );

  const compiledProviders = compileProviders(providers, secrets, input.sealKey, verdicts);
  const compiledWorkflows = compileWorkflows(workflows, projectIds, compiledProviders, verdicts);
  const apiKeys = compileApiKeys(keys, projectIds, secrets, input.now, verdicts);
  const spendCaps = compileSpendCaps(caps, projectIds, compiledWorkflows, verdicts);
  const guardrails = compileGuardrails(
    guards,
    projectIds,
    compiledWorkflows,
    secrets,
    input.sealKey,
    verdicts,
  );
  const mcpServers = compileMcpServers(mcp, projectIds, secrets, input.sealKey, verdicts);

  const body: SnapshotBody = { schemaVersion: SNAPSHOT_SCHEMA_VERSION, projects: {}, apiKeys };
  for (const p of projects) {
    const ns = p.metadata.namespace;
    const id = projectIdOf(ns, p.metadata.name);
    const webhooks: SnapshotProject['webhooks'] = [];
    const problems: string[] = [];
    (p.spec.webhooks ?? []).forEach((w, i) => {
      const found = secrets.lookup(ns, w.secretRef);
      const invalid = found.ok ? webhookSecretProblem(found.value) : undefined;
      if (invalid) problems.push(`webhooks[${i}] (${w.url}) is disabled: ${invalid}`);
      else if (found.ok)
        webhooks.push({
          url: w.url,
          secret: seal(input.sealKey, `webhook:${id}:${w.url}`, found.value),
          events: w.events,
        });
      else problems.push(`webhooks[${i}] (${w.url}) is disabled: ${found.message}`);
    });
    const wfs = compiledWorkflows.get(id) ?? new Map();
    const providerMap: SnapshotProject['providers'] = {};
    for (const [key, prov] of compiledProviders) if (key.startsWith(`${ns}/`)) providerMap[prov.name] = prov;
    body.projects[id] = {
      id,
      displayName: p.spec.displayName ?? p.metadata.name,
      compatibleApiEnabled: p.spec.compatibleApi.enabled,
      ...(p.spec.rateLimit ? { rateLimit: p.spec.rateLimit } : {}),
      allowPrivateNetworks: p.spec.outboundFetch?.allowPrivateNetworks ?? false,
      webhooks,
      providers: providerMap,
      workflows: Object.fromEntries([...wfs].map(([name, w]) => [name, w.compiled])),
      spendCaps: spendCaps.get(id) ?? [],
      requestLogs: compileRequestLogs(p),
      storedResponses: { retentionDays: p.spec.storedResponses.retentionDays },
      mcpServers: mcpServers.get(id) ?? {},
      guardrails: guardrails.get(id) ?? {},
    };
    const keyCount = new Set(
      Object.values(apiKeys)
        .filter((k) => k.projectId === id)
        .map((k) => k.keyId),
    ).size;
    const details = { projectId: id, workflows: wfs.size, apiKeys: keyCount };
    // A broken webhook secret disables that webhook only: the project keeps serving, but is flagged.
    if (problems.length)
      verdicts.fail(
        p,
        'WebhookSecretMissing',
        `${problems.join('; ')}; the project serves without it`,
        details,
      );
    else verdicts.ok(p, `project ${id}: ${wfs.size} workflow(s), ${keyCount} key(s)`, details);
  }

  const version = sha256Hex(canonicalJson(body)).slice(0, 32);
  return { snapshot: { ...body, version, generatedAt: input.now.toISOString() }, verdicts: verdicts.all() };
}
