/**
 * Which spec field a refusal is about, from what the refusing side says: the API server names it
 * (`spec.requestType: Unsupported value ...`), the compiler names the slot in its message
 * (`backup-1: Provider "x" not found`, operator/src/compiler/workflows.ts).
 */

/** The first `spec.<path>` an API server 422 message names, without the `spec.` prefix. */
export function specPathOfApiServerMessage(message: string): string | undefined {
  const m = /is invalid: \[?spec\.((?:[A-Za-z0-9_]+|\[\d+\])(?:\.[A-Za-z0-9_]+|\[\d+\])*)/.exec(message);
  if (m) return m[1];
  if (/is invalid: \[?metadata\.name/.test(message)) return 'name';
  return undefined;
}

const slotPath = (message: string, field: 'provider' | 'model'): string | undefined => {
  const m = /^(primary|backup-(\d+)):/.exec(message);
  if (!m) return undefined;
  return m[2] ? `backups[${Number(m[2]) - 1}].${field}` : field;
};

/** The spec field a compiler verdict (Ready=False reason and message) is about. */
export function specPathOfVerdict(reason: string, message: string): string | undefined {
  switch (reason) {
    case 'ProviderNotFound':
    case 'ProviderNotReady':
      return slotPath(message, 'provider');
    case 'ModelNotFound':
      return slotPath(message, 'model');
    case 'ModelDoesNotSupportRequestType':
      return 'requestType';
    case 'DuplicateWorkflowName':
      return 'name';
    default:
      return undefined;
  }
}

/** A zod issue path (`['backups', 0, 'provider']`) as a spec path (`backups[0].provider`). */
export const specPathOf = (path: readonly PropertyKey[]): string =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');
