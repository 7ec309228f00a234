import type { SwitchyardKind, SwitchyardObject } from '../resources/index.ts';
import type { SecretData } from '../resources/secret.ts';

/** Reasons an object is not part of the snapshot; they become status condition reasons. */
export const REASONS = [
  'InvalidSpec',
  'ProjectNotFound',
  'ProviderNotFound',
  'ProviderNotReady',
  'ModelNotFound',
  'ModelDoesNotSupportRequestType',
  'DuplicateWorkflowName',
  'SecretMissing',
  'SecretEmpty',
  'SecretInvalid',
  'WebhookSecretMissing',
  'KeyPending',
  'KeyMalformed',
  'KeyExpired',
  'KeyRevoked',
  'DuplicateKey',
  'WorkflowNotFound',
  'WorkflowNotReady',
  'SlotNotFound',
  'InvalidPattern',
  'ApiKeyNotFound',
  'DuplicateToolPrefix',
] as const;
export type Reason = (typeof REASONS)[number];

export interface ObjectRef {
  kind: SwitchyardKind;
  namespace: string;
  name: string;
  generation?: number;
}

/** Per-object outcome. `details` feeds status fields (counts, projectId, key prefix). */
export type Verdict =
  | { ref: ObjectRef; ok: true; reason: 'Valid'; message: string; details: Record<string, string | number> }
  | { ref: ObjectRef; ok: false; reason: Reason; message: string; details: Record<string, string | number> };

export interface CompileInput {
  objects: readonly SwitchyardObject[];
  secrets: readonly SecretData[];
  now: Date;
  sealKey: Buffer;
}

export const refKey = (r: Pick<ObjectRef, 'kind' | 'namespace' | 'name'>): string =>
  `${r.kind}/${r.namespace}/${r.name}`;

export const refOf = (o: SwitchyardObject): ObjectRef => ({
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
  ...(o.metadata.generation !== undefined ? { generation: o.metadata.generation } : {}),
});

/**
 * Creation time in ms for "the older object wins" rules. Compared as instants, not as text: the same
 * instant can be written many ways (offsets, fractions) and text order then disagrees with age.
 * Objects without a readable timestamp count as oldest.
 */
export const createdMs = (o: SwitchyardObject): number => {
  const t = Date.parse(o.metadata.creationTimestamp ?? '');
  return Number.isFinite(t) ? t : Number.NEGATIVE_INFINITY;
};

/** Oldest first; `tieBreak` orders objects created at the same instant. */
export const olderFirst = (a: SwitchyardObject, b: SwitchyardObject, tieBreak: number): number => {
  const ta = createdMs(a);
  const tb = createdMs(b);
  return ta === tb ? tieBreak : ta < tb ? -1 : 1;
};

export const projectIdOf = (namespace: string, name: string): string => `${namespace}.${name}`;
