import { type SnapshotProvider, seal } from '#contract';
import { DEFAULT_BASE_URLS, type Provider } from '../resources/provider.ts';
import type { SecretIndex } from './secrets.ts';
import type { Verdicts } from './verdicts.ts';

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
    let credential: SnapshotProvider['credential'] = null;
    if (p.spec.credentials) {
      const found = secrets.lookup(namespace, p.spec.credentials.secretRef);
      if (!found.ok) {
        verdicts.fail(p, found.reason, `credentials: ${found.message}`);
        continue;
      }
      credential = seal(sealKey, `provider:${namespace}/${name}`, found.value);
    }
    const models: SnapshotProvider['models'] = {};
    for (const m of p.spec.models) {
      models[m.name] = {
        requestTypes: [...new Set(m.requestTypes)].sort(),
        ...(m.pricing ? { pricing: m.pricing } : {}),
        ...(m.maxOutputTokens ? { maxOutputTokens: m.maxOutputTokens } : {}),
      };
    }
    out.set(`${namespace}/${name}`, {
      name,
      type: p.spec.type,
      baseURL: (p.spec.baseURL ?? DEFAULT_BASE_URLS[p.spec.type] ?? '').replace(/\/+$/, ''),
      ...(p.spec.apiVersion ? { apiVersion: p.spec.apiVersion } : {}),
      credential,
      streaming: p.spec.streaming,
      timeouts: p.spec.timeouts,
      models,
    });
    verdicts.ok(p, `${p.spec.models.length} model(s) available`, { models: p.spec.models.length });
  }
  return out;
}
