import type { SecretData } from '../resources/secret.ts';

export type SecretLookup =
  | { ok: true; value: string }
  | { ok: false; reason: 'SecretMissing' | 'SecretEmpty'; message: string };

export class SecretIndex {
  readonly #byName = new Map<string, SecretData>();

  constructor(secrets: readonly SecretData[]) {
    for (const s of secrets) this.#byName.set(`${s.namespace}/${s.name}`, s);
  }

  lookup(namespace: string, ref: { name: string; key: string }): SecretLookup {
    const secret = this.#byName.get(`${namespace}/${ref.name}`);
    if (!secret)
      return {
        ok: false,
        reason: 'SecretMissing',
        message: `Secret "${ref.name}" not found in namespace ${namespace}`,
      };
    const value = secret.data[ref.key];
    if (value === undefined)
      return { ok: false, reason: 'SecretMissing', message: `Secret "${ref.name}" has no key "${ref.key}"` };
    if (value.trim() === '')
      return { ok: false, reason: 'SecretEmpty', message: `Secret "${ref.name}" key "${ref.key}" is empty` };
    return { ok: true, value: value.trim() };
  }

  get(namespace: string, name: string): SecretData | undefined {
    return this.#byName.get(`${namespace}/${name}`);
  }
}
