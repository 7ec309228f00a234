/**
 * The model objects of GET /v1/models (http/models.ts), from a runtime compiled from manifests:
 * one compatible model per workflow, and the legacy per-provider list.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { modelObject, OWNED_BY, providerModels } from '#gateway/http/models';
import type { RuntimeProject } from '#gateway/snapshot/runtime';
import { API_KEY, apiKey, PROJECT_ID, project, provider, workflow } from '../harness/manifests.ts';
import { compileRuntime } from '../routing/helpers.ts';

const URL_ = 'http://127.0.0.1:9';
let proj: RuntimeProject;

beforeAll(async () => {
  const runtime = await compileRuntime([
    project(),
    ...apiKey('main', API_KEY),
    ...provider('oai', 'openai', URL_, ['gpt-4o-mini', 'text-embedding-3-small']),
    ...provider('claude', 'anthropic', URL_, ['claude-haiku-4-5']),
    workflow('support', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      backups: [{ provider: 'oai', model: 'gpt-4o-mini' }],
    }),
    workflow('embed', {
      provider: 'oai',
      model: 'text-embedding-3-small',
      requestType: 'embedding',
      testMode: true,
    }),
  ]);
  proj = runtime.projects.get(PROJECT_ID)!;
});

describe('modelObject', () => {
  it('one OpenAI model object per workflow: the workflow’s name, its primary, its request type', () => {
    const wf = proj.workflows.get('support')!;
    expect(modelObject(wf)).toEqual({
      id: 'support',
      object: 'model',
      created: wf.config.createdAt,
      owned_by: OWNED_BY,
      permission: [],
      root: 'claude/claude-haiku-4-5',
      service_metadata: {
        provider: 'claude',
        provider_model: 'claude-haiku-4-5',
        test_mode: false,
        request_type: 'chat',
      },
    });
    expect(OWNED_BY).toBe('switchyard');
    expect(Number.isInteger(wf.config.createdAt)).toBe(true);
  });

  it('test mode and the request type are the workflow’s', () => {
    expect(modelObject(proj.workflows.get('embed')!).service_metadata).toEqual({
      provider: 'oai',
      provider_model: 'text-embedding-3-small',
      test_mode: true,
      request_type: 'embedding',
    });
  });
});

describe('providerModels', () => {
  it('the providers’ own models, grouped by provider, with the request types each serves', () => {
    const all = ['audio', 'chat', 'completion', 'embedding', 'image', 'vision'];
    expect(providerModels(proj)).toEqual({
      object: 'list',
      data: [
        {
          provider: 'oai',
          type: 'openai',
          models: [
            { id: 'gpt-4o-mini', object: 'model', request_types: all },
            { id: 'text-embedding-3-small', object: 'model', request_types: all },
          ],
        },
        {
          provider: 'claude',
          type: 'anthropic',
          models: [{ id: 'claude-haiku-4-5', object: 'model', request_types: all }],
        },
      ],
    });
  });
});
