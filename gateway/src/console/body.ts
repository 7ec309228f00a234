import { z } from 'zod';
import { GatewayError } from '../errors/index.ts';
import { invalidRequest } from '../requests/zod-error.ts';
import type { WorkflowSpec } from './backend.ts';

/**
 * The console API's workflow body: the flat fields of docs/api.md (`request_type`,
 * `backup_N_provider`/`backup_N_model`, `event_name`) and the Workflow spec's other fields under
 * their CR names (`systemInstructions`, `cacheFields`, ...). Only the shape is checked here (a
 * wrong JSON type or an unknown field is 400); what the values may be is the Workflow schema's
 * call (operator/src/resources/workflow.ts), made by the API server or the embedded loader and
 * answered 422 with the field (see ./fields.ts).
 */

const BACKUP_FIELD = /^backup_(\d{1,3})_(provider|model)$/;

const obj = z.record(z.string(), z.unknown());
const fields = z
  .object({
    name: z.string(),
    description: z.string(),
    provider: z.string(),
    model: z.string(),
    request_type: z.string(),
    event_name: z.string(),
    backups: z.array(z.object({ provider: z.string(), model: z.string() }).strict()),
    systemInstructions: z.string(),
    structuredOutput: obj,
    cacheFields: z.array(z.string()),
    sessionMemory: obj,
    responseCache: obj,
    hostedTools: obj,
    testMode: z.boolean(),
  })
  .partial()
  .strict();

/** Spec names the API spells in snake case; both spellings are read, the snake-case one is written. */
const ALIASES = { requestType: 'request_type', eventName: 'event_name' } as const;

export interface WorkflowBody {
  /** The API name clients send as `workflow` or `model`. */
  name: string;
  /** The spec without projectRef (the project comes from the URL). */
  spec: Omit<WorkflowSpec, 'projectRef'>;
  /** Whether backups came as flat `backup_N_*` fields: errors then name those. */
  flatBackups: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a create (name from the body) or replace (name from the path) body. */
export function readWorkflowBody(raw: unknown, pathName?: string): WorkflowBody {
  if (!isObject(raw))
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.', {
      hint: 'Send Content-Type: application/json with a JSON object body.',
    });
  const rest: Record<string, unknown> = {};
  const flat = new Map<number, { provider?: unknown; model?: unknown }>();
  for (const [k, v] of Object.entries(raw)) {
    const m = BACKUP_FIELD.exec(k);
    if (m) {
      const slot = flat.get(Number(m[1])) ?? {};
      if (m[2] === 'provider') slot.provider = v;
      else slot.model = v;
      flat.set(Number(m[1]), slot);
    } else if (k in ALIASES) {
      const canonical = ALIASES[k as keyof typeof ALIASES];
      if (canonical in raw)
        throw new GatewayError('invalid_request', `Send either ${canonical} or ${k}, not both.`, {
          param: k,
        });
      rest[canonical] = v;
    } else rest[k] = v;
  }
  const parsed = fields.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys')
      throw new GatewayError('invalid_request', `Unknown field "${issue.keys[0]}".`, {
        param: issue.keys[0],
        hint: 'Send the reference fields (name, description, provider, model, request_type, backup_N_provider, backup_N_model, event_name) or Workflow spec fields.',
      });
    throw invalidRequest(parsed.error);
  }
  const b = parsed.data;
  const name = pathName ?? b.name;
  if (name === undefined) throw new GatewayError('invalid_request', 'name is required.', { param: 'name' });
  if (pathName !== undefined && b.name !== undefined && b.name !== pathName)
    throw new GatewayError('invalid_request', 'name in the body differs from the name in the path.', {
      param: 'name',
      hint: 'A workflow cannot be renamed: create the new name and delete the old one.',
    });
  const { provider, model } = b;
  if (provider === undefined)
    throw new GatewayError('invalid_request', 'provider is required.', { param: 'provider' });
  if (model === undefined)
    throw new GatewayError('invalid_request', 'model is required.', { param: 'model' });
  if (flat.size && b.backups)
    throw new GatewayError(
      'invalid_request',
      'Send backups either as backup_N_* fields or as backups, not both.',
      {
        param: 'backups',
      },
    );
  const backups: { provider: string; model: string }[] = b.backups ?? [];
  const positions = [...flat.keys()].sort((x, y) => x - y);
  positions.forEach((n, i) => {
    const slot = flat.get(n) ?? {};
    if (n !== i + 1)
      throw new GatewayError(
        'invalid_request',
        `backup_${i + 1}_provider is missing: backups are numbered from 1 without gaps.`,
        {
          param: `backup_${i + 1}_provider`,
        },
      );
    const pair = { provider: slot.provider, model: slot.model };
    if (typeof pair.provider !== 'string' || typeof pair.model !== 'string') {
      const f = typeof pair.provider !== 'string' ? 'provider' : 'model';
      throw new GatewayError(
        'invalid_request',
        `backup_${n}_${f} must be a string (each backup needs both).`,
        {
          param: `backup_${n}_${f}`,
        },
      );
    }
    backups.push({ provider: pair.provider, model: pair.model });
  });
  const spec: WorkflowBody['spec'] = {
    name,
    provider,
    model,
    ...(b.description !== undefined ? { description: b.description } : {}),
    ...(b.request_type !== undefined ? { requestType: b.request_type } : {}),
    ...(b.event_name !== undefined ? { eventName: b.event_name } : {}),
    ...(backups.length ? { backups } : {}),
    ...(b.systemInstructions !== undefined ? { systemInstructions: b.systemInstructions } : {}),
    ...(b.structuredOutput !== undefined ? { structuredOutput: b.structuredOutput } : {}),
    ...(b.cacheFields !== undefined ? { cacheFields: b.cacheFields } : {}),
    ...(b.sessionMemory !== undefined ? { sessionMemory: b.sessionMemory } : {}),
    ...(b.responseCache !== undefined ? { responseCache: b.responseCache } : {}),
    ...(b.hostedTools !== undefined ? { hostedTools: b.hostedTools } : {}),
    ...(b.testMode !== undefined ? { testMode: b.testMode } : {}),
  };
  return { name, spec, flatBackups: flat.size > 0 };
}

/**
 * A Workflow spec path (`requestType`, `backups[0].provider`) in the words the client used:
 * reference names for reference fields, `backup_N_*` when backups came flat.
 */
export function bodyField(specPath: string, flatBackups: boolean): string {
  const backup = /^backups\[(\d+)\]\.(provider|model)$/.exec(specPath);
  if (backup && flatBackups) return `backup_${Number(backup[1]) + 1}_${backup[2]}`;
  if (specPath === 'requestType') return 'request_type';
  if (specPath === 'eventName') return 'event_name';
  return specPath;
}
