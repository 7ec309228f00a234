/**
 * Workflow selection (routing/resolve.ts) and the plan's adapter choice (routing/plan.ts), on a
 * runtime compiled from manifests: which route a selection finds, and the refusal, field by field,
 * of every selection that finds none.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '#gateway/errors/index';
import { getAdapter } from '#gateway/providers/registry';
import { testModeAdapter } from '#gateway/providers/testmode/index';
import { adapterFor, speaksDialect } from '#gateway/routing/plan';
import { resolveRoute, type Selection } from '#gateway/routing/resolve';
import type { Runtime, RuntimeProject } from '#gateway/snapshot/runtime';
import { API_KEY, apiKey, PROJECT_ID, project, provider, workflow } from '../harness/manifests.ts';
import { chat, compileRuntime, prepared } from './helpers.ts';

const SIM = 'http://127.0.0.1:9';
let runtime: Runtime;
let proj: RuntimeProject;

beforeAll(async () => {
  runtime = await compileRuntime([
    project(),
    ...apiKey('main', API_KEY),
    ...provider('oai', 'openai', SIM, ['gpt-4o-mini', 'gpt-4o']),
    ...provider('claude', 'anthropic', SIM, ['claude-haiku-4-5']),
    workflow('support', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    }),
    // A workflow named like a provider's model: `model` finds the workflow first.
    workflow('gpt-4o', { provider: 'claude', model: 'claude-haiku-4-5' }),
    workflow('claude-only', { provider: 'claude', model: 'claude-haiku-4-5' }),
  ]);
  const p = runtime.projects.get(PROJECT_ID);
  if (!p) throw new Error('project not compiled');
  proj = p;
});

/** The refusal a selection gets, as its fields. */
function refusal(sel: Selection) {
  try {
    resolveRoute(proj, sel);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { code: err.code, status: err.status, message: err.message, param: err.param, hint: err.hint };
  }
  throw new Error('expected a refusal');
}

const routeName = (sel: Selection): string => {
  const r = resolveRoute(proj, sel);
  return r.kind === 'workflow'
    ? `workflow ${r.workflow.config.name}`
    : `direct ${r.slot.provider}/${r.slot.model}`;
};

describe('resolveRoute', () => {
  it('`workflow` wins over `model` and `provider`', () => {
    expect(routeName({ workflow: 'support', model: 'gpt-4o', provider: 'oai' })).toBe('workflow support');
  });

  it('`model` names a workflow, before it names a provider model', () => {
    expect(routeName({ model: 'support' })).toBe('workflow support');
    expect(routeName({ model: 'gpt-4o', provider: 'oai' })).toBe('workflow gpt-4o');
  });

  it('the workflow route carries the workflow’s slots in order', () => {
    const r = resolveRoute(proj, { workflow: 'support' });
    if (r.kind !== 'workflow') throw new Error('expected a workflow route');
    expect(r.workflow.slots.map((s) => [s.slot, s.position, s.provider, s.model])).toEqual([
      ['primary', 0, 'oai', 'gpt-4o-mini'],
      ['backup-1', 1, 'claude', 'claude-haiku-4-5'],
    ]);
  });

  it('`provider` and `model` without a workflow: one primary slot on that provider model', () => {
    const r = resolveRoute(proj, { provider: 'oai', model: 'gpt-4o-mini' });
    expect(r.kind).toBe('direct');
    if (r.kind !== 'direct') return;
    expect(r.supported).toEqual(['audio', 'chat', 'completion', 'embedding', 'image', 'vision']);
    expect(r.slot).toMatchObject({
      slot: 'primary',
      position: 0,
      provider: 'oai',
      model: 'gpt-4o-mini',
      pricing: { inputUsdPerMTok: '1', outputUsdPerMTok: '2' },
      target: { providerName: 'oai', type: 'openai', baseURL: `${SIM}/v1`, model: 'gpt-4o-mini' },
    });
  });

  it('an unknown workflow: 404 workflow_not_found, with where to look', () => {
    const notFound = (name: string) => ({
      code: 'workflow_not_found',
      status: 404,
      message: `Workflow "${name}" does not exist in this project.`,
      param: undefined,
      hint: "Workflow names are case-sensitive; GET /v1/models lists the workflows of this key's project.",
    });
    expect(refusal({ workflow: 'Support' })).toEqual(notFound('Support'));
    expect(refusal({ model: 'nope' })).toEqual(notFound('nope'));
  });

  it('`provider` without `model`, and nothing at all: 400 naming the field to send', () => {
    expect(refusal({ provider: 'oai' })).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'model is required when provider is sent without a workflow.',
      param: 'model',
      hint: undefined,
    });
    expect(refusal({})).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Name a workflow: send "workflow" (or "model" with a workflow name).',
      param: 'workflow',
      hint: 'Without a workflow, send both "provider" and "model".',
    });
  });

  it('an unknown provider, or a model it does not offer: 400 naming the field', () => {
    expect(refusal({ provider: 'azure', model: 'gpt-4o-mini' })).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Provider "azure" is not configured for this project.',
      param: 'provider',
      hint: undefined,
    });
    expect(refusal({ provider: 'oai', model: 'gpt-5' })).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Model "gpt-5" is not offered by provider "oai".',
      param: 'model',
      hint: 'Offered: gpt-4o-mini, gpt-4o.',
    });
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'a model named like an Object member (%s) is not offered',
    (model) => {
      expect(refusal({ provider: 'oai', model })).toMatchObject({
        code: 'invalid_request',
        message: `Model "${model}" is not offered by provider "oai".`,
        param: 'model',
      });
    },
  );
});

describe('the plan’s adapters', () => {
  const slot = (i: number) => () => proj.workflows.get('support')!.slots[i]!;
  const oai = slot(0);
  const claude = slot(1);

  it('adapterFor: the slot’s provider adapter, or the test-mode generator for every slot in test mode', () => {
    const live = prepared(runtime, chat('support')).plan;
    expect(adapterFor(live, oai())).toBe(getAdapter('openai'));
    expect(adapterFor(live, claude())).toBe(getAdapter('anthropic'));
    const tm = { ...live, testMode: true };
    expect(adapterFor(tm, oai())).toBe(testModeAdapter);
    expect(adapterFor(tm, claude())).toBe(testModeAdapter);
  });

  it('speaksDialect: some slot would take the Anthropic body as written; never in test mode', () => {
    expect(speaksDialect(false, [oai(), claude()], 'anthropic-messages')).toBe(true);
    expect(speaksDialect(false, [oai()], 'anthropic-messages')).toBe(false);
    expect(speaksDialect(true, [claude()], 'anthropic-messages')).toBe(false);
  });
});
