import { type ProviderAuth, type SnapshotProvider, seal } from '#contract';
import type { Provider } from '../resources/provider.ts';
import { DEFAULT_ENDPOINTS } from '../resources/provider-credentials.ts';
import { DEFAULT_BASE_URLS } from '../resources/provider-requirements.ts';
import type { SecretIndex } from './secrets.ts';
import type { Reason } from './types.ts';
import type { Verdicts } from './verdicts.ts';

type Compiled =
  | { ok: true; auth: ProviderAuth; secret: string | undefined }
  | { ok: false; reason: Reason; message: string };

/** A service-account key must carry what the JWT bearer grant signs with; anything else fails here, not per request. */
function serviceAccountProblem(json: string): string | undefined {
  let key: unknown;
  try {
    key = JSON.parse(json);
  } catch {
    return 'is not a JSON service-account key';
  }
  const k = key as Record<string, unknown>;
  if (typeof k !== 'object' || k === null) return 'is not a JSON service-account key';
  if (typeof k.client_email !== 'string' || typeof k.private_key !== 'string')
    return 'is not a service-account key (client_email and private_key are required)';
  return undefined;
}

/** The Provider's credentials as a snapshot auth method and the secret to seal (if any). */
function compileAuth(p: Provider, secrets: SecretIndex): Compiled {
  const { namespace } = p.metadata;
  const c = p.spec.credentials;
  const region = p.spec.region ?? '';
  if (!c) return { ok: true, auth: { method: 'api-key' }, secret: undefined };
  if (c.webIdentity)
    return {
      ok: true,
      auth: {
        method: 'aws-web-identity',
        ...(c.webIdentity.roleArn ? { roleArn: c.webIdentity.roleArn } : {}),
        ...(c.webIdentity.tokenFile ? { tokenFile: c.webIdentity.tokenFile } : {}),
        sessionName: c.webIdentity.sessionName,
        stsEndpoint: p.spec.endpoints?.sts ?? DEFAULT_ENDPOINTS.sts(region),
      },
      secret: undefined,
    };
  if (c.workloadIdentity)
    return {
      ok: true,
      auth: {
        method: 'gcp-workload-identity',
        metadataEndpoint: p.spec.endpoints?.metadata ?? DEFAULT_ENDPOINTS.metadata,
        serviceAccount: c.workloadIdentity.serviceAccount,
      },
      secret: undefined,
    };
  if (c.awsAccessKeys) {
    const ref = c.awsAccessKeys;
    const id = secrets.lookup(namespace, { name: ref.name, key: ref.accessKeyIdKey });
    if (!id.ok) return id;
    const key = secrets.lookup(namespace, { name: ref.name, key: ref.secretAccessKeyKey });
    if (!key.ok) return key;
    const token = secrets.get(namespace, ref.name)?.data[ref.sessionTokenKey]?.trim();
    return {
      ok: true,
      auth: { method: 'aws-access-keys' },
      secret: JSON.stringify({
        accessKeyId: id.value,
        secretAccessKey: key.value,
        ...(token ? { sessionToken: token } : {}),
      }),
    };
  }
  if (!c.secretRef) return { ok: false, reason: 'InvalidSpec', message: 'no credentials given' };
  const found = secrets.lookup(namespace, c.secretRef);
  if (!found.ok) return found;
  if (p.spec.type === 'vertex-ai') {
    const problem = serviceAccountProblem(found.value);
    if (problem)
      return {
        ok: false,
        reason: 'SecretInvalid',
        message: `Secret "${c.secretRef.name}" key "${c.secretRef.key}" ${problem}`,
      };
    return {
      ok: true,
      auth: {
        method: 'gcp-service-account',
        ...(p.spec.endpoints?.token ? { tokenEndpoint: p.spec.endpoints.token } : {}),
      },
      secret: found.value,
    };
  }
  return { ok: true, auth: { method: 'api-key' }, secret: found.value };
}

/** Compiles every Provider; the result is keyed `<namespace>/<name>` and holds only the valid ones. */
export function compileProviders(
  providers: readonly Provider[],
  secrets: SecretIndex,
  sealKey: Buffer,
  verdicts: Verdicts,
): Map<string, SnapshotProvider> {
  const out = new Map<string, SnapshotProvider>();
  for (const p of providers) {
    const { namespace, name } = p.metadata;
    const compiled = compileAuth(p, secrets);
    if (!compiled.ok) {
      verdicts.fail(p, compiled.reason, `credentials: ${compiled.message}`);
      continue;
    }
    const credential =
      compiled.secret === undefined ? null : seal(sealKey, `provider:${namespace}/${name}`, compiled.secret);
    const models: SnapshotProvider['models'] = {};
    for (const m of p.spec.models) {
      models[m.name] = {
        requestTypes: [...new Set(m.requestTypes)].sort(),
        ...(m.pricing ? { pricing: m.pricing } : {}),
        ...(m.maxOutputTokens ? { maxOutputTokens: m.maxOutputTokens } : {}),
        ...(m.streaming === undefined ? {} : { streaming: m.streaming }),
      };
    }
    const region = p.spec.region;
    out.set(`${namespace}/${name}`, {
      name,
      type: p.spec.type,
      baseURL: (p.spec.baseURL ?? DEFAULT_BASE_URLS[p.spec.type]?.(region ?? '') ?? '').replace(/\/+$/, ''),
      ...(p.spec.apiVersion ? { apiVersion: p.spec.apiVersion } : {}),
      ...(region ? { region } : {}),
      ...(p.spec.project ? { project: p.spec.project } : {}),
      auth: compiled.auth,
      credential,
      streaming: p.spec.streaming,
      timeouts: p.spec.timeouts,
      models,
    });
    verdicts.ok(p, `${p.spec.models.length} model(s) available`, { models: p.spec.models.length });
  }
  return out;
}
