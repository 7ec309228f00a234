import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, type KubeClient, type KubeObject } from '../kube/client.ts';
import type { Informer } from '../kube/informer.ts';
import type { ApiKey } from '../resources/index.ts';
import { generatedKeySecretName } from './secret-fields.ts';
import { planKeySecret } from './secret-plan.ts';

export interface KeyStepDeps {
  client: KubeClient;
  /** The Secret informer: read for the current Secret, updated with our own writes. */
  secrets: Informer;
  logger: Logger;
  /** Records an Event on the ApiKey the Secret belongs to. */
  event(key: ApiKey, reason: 'KeyGenerated' | 'KeySecretUpdated', message: string): void;
}

export interface KeyStepResult {
  /** Secrets created or updated. */
  written: number;
  /** A write lost a race with the cache (already exists, conflict): run the step again shortly. */
  stale: boolean;
}

/**
 * The key step, run before each compile pass: creates, fills and rotates the generated-key Secrets
 * of ApiKeys without secretRef (planKeySecret decides), so the pass that follows compiles with them.
 * It writes Secrets only; the compiler never writes and never generates.
 */
export async function ensureGeneratedKeys(
  keys: readonly ApiKey[],
  now: Date,
  deps: KeyStepDeps,
): Promise<KeyStepResult> {
  const result: KeyStepResult = { written: 0, stale: false };
  for (const key of keys) {
    const ns = key.metadata.namespace;
    const name = generatedKeySecretName(key.metadata.name);
    const plan = planKeySecret(key, deps.secrets.get(ns, name), now);
    if (plan.action === 'none') continue;
    const path = `/api/v1/namespaces/${ns}/secrets`;
    try {
      const written: KubeObject =
        plan.action === 'create'
          ? await deps.client.request('POST', path, { body: plan.secret })
          : await deps.client.request('PUT', `${path}/${name}`, { body: plan.secret });
      deps.secrets.upsertLocal(written);
      result.written++;
      deps.logger.info({ msg: plan.event, apiKey: `${ns}/${key.metadata.name}`, secret: name });
      deps.event(key, plan.action === 'create' ? 'KeyGenerated' : 'KeySecretUpdated', plan.event);
    } catch (err) {
      // The cache was behind; the watch brings the current Secret, and the caller runs again.
      if (isAlreadyExists(err) || isConflict(err)) result.stale = true;
      else throw err;
    }
  }
  return result;
}
