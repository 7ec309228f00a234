import { stringify } from 'yaml';
import { type KubeClient, KubeError, type KubeObject } from '#operator/kube/index';
import { MANAGED_BY_CONSOLE, MANAGED_BY_LABEL, WorkflowRefusedError } from '../console/backend.ts';
import { specPathOfApiServerMessage } from '../console/fields.ts';
import { serverMessage } from '../console/kube-backend.ts';

/**
 * Console writes on a cluster: server-side apply under the field manager `switchyard-console`,
 * never forced. A field another manager owns (Argo CD, Flux, Helm, kubectl) is theirs: the API
 * server refuses a conflicting apply with 409 and writes nothing, and the console answers with the
 * YAML and the command that make the change where it belongs.
 */

export const FIELD_MANAGER = MANAGED_BY_CONSOLE;
export const API_VERSION = 'switchyard.dev/v1alpha1';

export interface FieldOwner {
  manager: string;
  operation: string;
  /** The tool the manager name belongs to, when it is a well-known one. */
  tool: string | undefined;
  /** Top-level spec fields it owns. */
  fields: string[];
}

const TOOLS: [RegExp, string][] = [
  [/^argocd/, 'Argo CD'],
  [/^(kustomize|helm)-controller$/, 'Flux'],
  [/^helm$/, 'Helm'],
  [/^kubectl/, 'kubectl'],
];

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Who owns which spec fields, from metadata.managedFields (the console itself left out). */
export function ownersOf(o: KubeObject, kind = 'spec'): FieldOwner[] {
  const entries = Array.isArray(o.metadata.managedFields) ? (o.metadata.managedFields as unknown[]) : [];
  const out: FieldOwner[] = [];
  for (const e of entries) {
    if (!isRecord(e) || typeof e.manager !== 'string' || e.manager === FIELD_MANAGER) continue;
    if (typeof e.subresource === 'string' && e.subresource !== '') continue;
    const v1 = isRecord(e.fieldsV1) ? e.fieldsV1[`f:${kind}`] : undefined;
    const fields = isRecord(v1)
      ? Object.keys(v1)
          .filter((k) => k.startsWith('f:'))
          .map((k) => k.slice(2))
      : [];
    if (fields.length === 0) continue;
    out.push({
      manager: e.manager,
      operation: typeof e.operation === 'string' ? e.operation : 'Update',
      tool: TOOLS.find(([re]) => re.test(e.manager as string))?.[1],
      fields: fields.sort(),
    });
  }
  return out;
}

/** Top-level spec fields the console's own apply owns. */
function consoleFields(o: KubeObject): string[] {
  const entries = Array.isArray(o.metadata.managedFields) ? (o.metadata.managedFields as unknown[]) : [];
  const mine = entries.find((e) => isRecord(e) && e.manager === FIELD_MANAGER && e.operation === 'Apply');
  const v1 = isRecord(mine) && isRecord(mine.fieldsV1) ? mine.fieldsV1['f:spec'] : undefined;
  return isRecord(v1)
    ? Object.keys(v1)
        .filter((k) => k.startsWith('f:'))
        .map((k) => k.slice(2))
    : [];
}

const pick = (o: Record<string, unknown>, keys: string[]): Record<string, unknown> =>
  Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

/** Top-level fields whose value the edit changes (added, changed or removed). */
export function changesOf(current: Record<string, unknown>, desired: Record<string, unknown>): FieldChange[] {
  const keys = [...new Set([...Object.keys(current), ...Object.keys(desired)])].sort();
  return keys
    .filter((k) => JSON.stringify(current[k]) !== JSON.stringify(desired[k]))
    .map((k) => ({ field: k, from: current[k], to: desired[k] }));
}

/** What the console answers instead of a write: the change, who owns it, and how to make it there. */
export interface HandOff {
  applied: false;
  reason: 'Conflict';
  message: string;
  owners: FieldOwner[];
  changes: FieldChange[];
  yaml: string;
  command: string;
}

export interface Applied {
  applied: true;
  object: KubeObject;
}

export interface ApplyTarget {
  /** The collection path, e.g. /apis/switchyard.dev/v1alpha1/namespaces/ns/workflows. */
  collection: string;
  kind: string;
  namespace: string;
  name: string;
  /** The object as it is (undefined for a create). */
  current: KubeObject | undefined;
}

/** The YAML of the object as the edit wants it, ready to commit or apply. */
export function manifestOf(t: ApplyTarget, spec: Record<string, unknown>): string {
  return stringify({
    apiVersion: API_VERSION,
    kind: t.kind,
    metadata: { name: t.name, namespace: t.namespace },
    spec,
  });
}

/**
 * The command for a human: as the owning manager when it applied (server-side apply of the same
 * manager never conflicts with itself), else forcing deliberately, which only a person should do.
 */
export function commandFor(t: ApplyTarget, owners: FieldOwner[]): string {
  const file = `${t.kind.toLowerCase()}-${t.name}.yaml`;
  const applier = owners.find((o) => o.operation === 'Apply');
  return applier && owners.every((o) => o.manager === applier.manager)
    ? `kubectl apply --server-side --field-manager=${applier.manager} -f ${file}`
    : `kubectl apply --server-side --force-conflicts -f ${file}`;
}

/**
 * Server-side applies `spec` (the whole spec the console manages) unless it would change a field
 * another manager owns. Removing such a field is caught here (an apply would silently keep it);
 * changing one is the API server's call, whose 409 is answered with its own message.
 */
export async function applySpec(
  client: KubeClient,
  t: ApplyTarget,
  spec: Record<string, unknown>,
  /** Only the given fields are the console's to set (a Project's webhooks); the rest stays as it is. */
  partial = false,
): Promise<Applied | HandOff> {
  const owners = t.current ? ownersOf(t.current) : [];
  const fullSpec = t.current && isRecord(t.current.spec) ? t.current.spec : {};
  const currentSpec = partial ? Object.fromEntries(Object.keys(spec).map((k) => [k, fullSpec[k]])) : fullSpec;
  const changes = changesOf(currentSpec, spec);
  // An apply is the manager's whole intent: a partial edit keeps the fields the console applied before.
  if (partial && t.current) spec = { ...pick(fullSpec, consoleFields(t.current)), ...spec };
  const handOff = (message: string): HandOff => {
    const touched = new Set(changes.map((c) => c.field));
    const involved = owners.filter((o) => o.fields.some((f) => touched.has(f)));
    const shown = involved.length > 0 ? involved : owners;
    return {
      applied: false,
      reason: 'Conflict',
      message,
      owners: shown,
      changes,
      yaml: manifestOf(t, spec),
      command: commandFor(t, shown),
    };
  };
  const removedOwned = changes.filter(
    (c) => c.to === undefined && owners.some((o) => o.fields.includes(c.field)),
  );
  if (removedOwned.length > 0) {
    const names = removedOwned.map((c) => `.spec.${c.field}`).join(', ');
    return handOff(`${names} belong to another field manager; removing them is theirs to do.`);
  }
  const body = {
    apiVersion: API_VERSION,
    kind: t.kind,
    metadata: {
      name: t.name,
      namespace: t.namespace,
      // Marks what the console created; an object someone else created keeps its own labels.
      ...(t.current ? {} : { labels: { [MANAGED_BY_LABEL]: MANAGED_BY_CONSOLE } }),
    },
    spec,
  };
  try {
    const object = await client.request<KubeObject>(
      'PATCH',
      `${t.collection}/${encodeURIComponent(t.name)}`,
      {
        body,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: FIELD_MANAGER },
      },
    );
    return { applied: true, object };
  } catch (err) {
    if (err instanceof KubeError && err.status === 409) return handOff(serverMessage(err));
    if (err instanceof KubeError && err.status === 422) {
      const message = serverMessage(err);
      throw new WorkflowRefusedError('Invalid', message, specPathOfApiServerMessage(message));
    }
    throw err;
  }
}

/**
 * The log line of a console write: the API server's audit log names the gateway's
 * ServiceAccount as the writer, this line names the identity the reviews allowed.
 */
export function logWrite(
  log: { info(o: object): void },
  user: string,
  t: { kind: string; namespace: string; name: string },
  result: Applied | HandOff,
): void {
  log.info({
    msg: result.applied ? 'console: applied' : 'console: handed off (fields owned by another manager)',
    user,
    kind: t.kind,
    namespace: t.namespace,
    name: t.name,
    fieldManager: FIELD_MANAGER,
  });
}
