import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { type Cluster, type KubectlResult, startCluster } from '../harness/cluster.ts';

/**
 * Acceptance of the generated CRDs (crds/*.yaml) by a real kube-apiserver (issue #3, item 3):
 * they install and become Established, every example applies, the OpenAPI schema and CEL rules
 * refuse invalid objects naming the offending field, the server applies the defaults, `kubectl
 * explain` shows the zod descriptions, `kubectl get` prints the columns, and status is a
 * subresource.
 */

const root = resolve(fileURLToPath(import.meta.url), '../../..');
// The first run may build the control plane from source; later runs start in seconds.
const START_MS = 45 * 60_000;
const API_VERSION = 'switchyard.dev/v1alpha1';
/** Objects this suite creates live here; the examples live in `acme`. */
const NS = `crd-acceptance-${process.pid}-${Date.now().toString(36)}`;

let cluster: Cluster;

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return cluster.kubectl(args, input === undefined ? { timeoutMs: 60_000 } : { input, timeoutMs: 60_000 });
}

async function ok(args: readonly string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

type Json = Record<string, unknown>;

/** YAML for kubectl, whose parser is YAML 1.1: quote `yes`, `on`... so they stay strings. */
const stringify = (doc: unknown): string => toYaml(doc, { version: '1.1' });

function object(kind: string, name: string, spec: Json, extra: Json = {}): Json {
  return { apiVersion: API_VERSION, kind, metadata: { name, namespace: NS }, spec, ...extra };
}

async function getJson(resource: string, name: string, ns = NS): Promise<Json> {
  return JSON.parse(await ok(['get', resource, name, '-n', ns, '-o', 'json'])) as Json;
}

const field = (o: Json, key: string): Json => (o[key] ?? {}) as Json;

// --- valid base specs; each invalid case changes one thing -------------------------------------

const workflowSpec = (): Json => ({
  projectRef: { name: 'storefront' },
  provider: 'openai',
  model: 'gpt-4o-mini',
});
const providerSpec = (): Json => ({
  type: 'openai',
  credentials: { secretRef: { name: 'openai-credentials' } },
  models: [{ name: 'gpt-4o-mini', requestTypes: ['chat'] }],
});
const spendCapSpec = (): Json => ({
  projectRef: { name: 'storefront' },
  scope: 'project',
  period: 'monthly',
  limitUsd: '10.00',
});
const apiKeySpec = (): Json => ({ projectRef: { name: 'storefront' } });
const webhook = (): Json => ({
  url: 'https://hooks.example.com/switchyard',
  secretRef: { name: 'hook-secret' },
  events: ['ai.response'],
});
const projectSpec = (): Json => ({ displayName: 'Acceptance', webhooks: [webhook()] });

function without(spec: Json, ...keys: string[]): Json {
  const copy = { ...spec };
  for (const k of keys) delete copy[k];
  return copy;
}

interface InvalidCase {
  what: string;
  kind: 'Workflow' | 'Provider' | 'SpendCap' | 'ApiKey' | 'Project';
  spec: Json;
  /** Substring of the API server's error that names the field. */
  field: string;
}

const backups = (n: number): Json[] =>
  Array.from({ length: n }, (_, i) => ({ provider: 'anthropic', model: `claude-${i}` }));

const INVALID: InvalidCase[] = [
  // Workflow
  {
    what: 'requestType not one of the six',
    kind: 'Workflow',
    spec: { ...workflowSpec(), requestType: 'video' },
    field: 'spec.requestType',
  },
  {
    what: 'missing provider',
    kind: 'Workflow',
    spec: without(workflowSpec(), 'provider'),
    field: 'spec.provider',
  },
  { what: 'missing model', kind: 'Workflow', spec: without(workflowSpec(), 'model'), field: 'spec.model' },
  {
    what: 'missing projectRef',
    kind: 'Workflow',
    spec: without(workflowSpec(), 'projectRef'),
    field: 'spec.projectRef',
  },
  {
    what: 'projectRef.name not a DNS subdomain',
    kind: 'Workflow',
    spec: { ...workflowSpec(), projectRef: { name: 'Store_Front' } },
    field: 'spec.projectRef.name',
  },
  {
    what: 'structuredOutput on an image workflow (CEL)',
    kind: 'Workflow',
    spec: {
      ...workflowSpec(),
      requestType: 'image',
      model: 'dall-e-3',
      structuredOutput: { schema: { type: 'object' } },
    },
    field: 'spec.structuredOutput',
  },
  {
    what: 'more than 10 backups',
    kind: 'Workflow',
    spec: { ...workflowSpec(), backups: backups(11) },
    field: 'spec.backups',
  },
  {
    what: 'provider not a Provider name (schema fix: was accepted)',
    kind: 'Workflow',
    spec: { ...workflowSpec(), provider: 'Open AI' },
    field: 'spec.provider',
  },
  {
    what: 'backup provider not a Provider name (schema fix: was accepted)',
    kind: 'Workflow',
    spec: { ...workflowSpec(), backups: [{ provider: 'anthropic_eu', model: 'claude-haiku-4-5' }] },
    field: 'spec.backups[0].provider',
  },
  {
    what: 'a backup without model',
    kind: 'Workflow',
    spec: { ...workflowSpec(), backups: [{ provider: 'anthropic' }] },
    field: 'spec.backups[0].model',
  },
  {
    what: 'cacheFields path outside metadata/inputs/context',
    kind: 'Workflow',
    spec: { ...workflowSpec(), cacheFields: ['metadata.customer_id', 'body.secret'] },
    field: 'spec.cacheFields[1]',
  },
  {
    what: 'cacheFields listed twice (set)',
    kind: 'Workflow',
    spec: { ...workflowSpec(), cacheFields: ['metadata.a', 'metadata.a'] },
    field: 'spec.cacheFields[1]',
  },
  {
    what: 'eventName with bad characters',
    kind: 'Workflow',
    spec: { ...workflowSpec(), eventName: 'order placed!' },
    field: 'spec.eventName',
  },
  {
    what: 'API name with a space',
    kind: 'Workflow',
    spec: { ...workflowSpec(), name: 'support chat' },
    field: 'spec.name',
  },
  {
    what: 'sessionMemory.summarizeAtTokens below 200',
    kind: 'Workflow',
    spec: { ...workflowSpec(), sessionMemory: { enabled: true, summarizeAtTokens: 100 } },
    field: 'spec.sessionMemory.summarizeAtTokens',
  },
  {
    what: 'responseCache.ttlSeconds of 0',
    kind: 'Workflow',
    spec: { ...workflowSpec(), responseCache: { ttlSeconds: 0 } },
    field: 'spec.responseCache.ttlSeconds',
  },
  {
    what: 'testMode not a boolean',
    kind: 'Workflow',
    spec: { ...workflowSpec(), testMode: 'yes' },
    field: 'spec.testMode',
  },
  // SpendCap
  {
    what: 'workflow scope without workflowRef and slot (CEL)',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), scope: 'workflow' },
    field: 'spec.workflowRef',
  },
  {
    what: 'workflow scope without slot (CEL)',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), scope: 'workflow', workflowRef: { name: 'support-chat' } },
    field: 'spec.workflowRef',
  },
  {
    what: 'project scope with a slot (CEL)',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), slot: 'primary' },
    field: 'spec.scope',
  },
  {
    what: 'project scope with a workflowRef (CEL)',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), workflowRef: { name: 'support-chat' } },
    field: 'spec.scope',
  },
  {
    what: 'limitUsd "-5"',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), limitUsd: '-5' },
    field: 'spec.limitUsd',
  },
  {
    what: 'limitUsd "abc"',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), limitUsd: 'abc' },
    field: 'spec.limitUsd',
  },
  {
    what: 'limitUsd "1e3"',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), limitUsd: '1e3' },
    field: 'spec.limitUsd',
  },
  {
    what: 'limitUsd with a leading zero "007"',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), limitUsd: '007' },
    field: 'spec.limitUsd',
  },
  {
    what: 'limitUsd as a number',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), limitUsd: 5 },
    field: 'spec.limitUsd',
  },
  {
    what: 'unknown period',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), period: 'yearly' },
    field: 'spec.period',
  },
  {
    what: 'slot backup-0',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), scope: 'workflow', workflowRef: { name: 'support-chat' }, slot: 'backup-0' },
    field: 'spec.slot',
  },
  {
    what: 'slot backup-11',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), scope: 'workflow', workflowRef: { name: 'support-chat' }, slot: 'backup-11' },
    field: 'spec.slot',
  },
  {
    what: 'unknown scope',
    kind: 'SpendCap',
    spec: { ...spendCapSpec(), scope: 'team' },
    field: 'spec.scope',
  },
  // Provider
  {
    what: 'unknown type',
    kind: 'Provider',
    spec: { ...providerSpec(), type: 'mistral' },
    field: 'spec.type',
  },
  {
    what: 'bedrock without region (CEL)',
    kind: 'Provider',
    spec: { ...providerSpec(), type: 'bedrock', credentials: { awsAccessKeys: { name: 'aws-keys' } } },
    field: 'spec.region',
  },
  {
    what: 'bedrock with an API key instead of AWS credentials (CEL)',
    kind: 'Provider',
    spec: { ...providerSpec(), type: 'bedrock', region: 'us-east-1' },
    field: 'bedrock credentials are awsAccessKeys or webIdentity',
  },
  {
    what: 'two kinds of credentials at once (CEL)',
    kind: 'Provider',
    spec: {
      ...providerSpec(),
      type: 'bedrock',
      region: 'us-east-1',
      credentials: { awsAccessKeys: { name: 'aws-keys' }, webIdentity: {} },
    },
    field: 'exactly one of secretRef, awsAccessKeys, webIdentity, workloadIdentity',
  },
  {
    what: 'vertex-ai without project (CEL)',
    kind: 'Provider',
    spec: {
      ...providerSpec(),
      type: 'vertex-ai',
      region: 'us-central1',
      credentials: { workloadIdentity: {} },
    },
    field: 'spec.project',
  },
  {
    what: 'openai with workload identity (CEL)',
    kind: 'Provider',
    spec: { ...providerSpec(), credentials: { workloadIdentity: {} } },
    field: 'this provider type takes an API key',
  },
  {
    what: 'webIdentity.roleArn not an IAM role ARN',
    kind: 'Provider',
    spec: {
      ...providerSpec(),
      type: 'bedrock',
      region: 'us-east-1',
      credentials: { webIdentity: { roleArn: 'arn:aws:s3:::bucket' } },
    },
    field: 'spec.credentials.webIdentity.roleArn',
  },
  {
    what: 'endpoints.sts not http(s)',
    kind: 'Provider',
    spec: { ...providerSpec(), endpoints: { sts: 'sts.amazonaws.com' } },
    field: 'spec.endpoints.sts',
  },
  {
    what: 'azure-openai without baseURL (CEL)',
    kind: 'Provider',
    spec: { ...providerSpec(), type: 'azure-openai' },
    field: 'spec.baseURL',
  },
  {
    what: 'openai-compatible without baseURL (CEL)',
    kind: 'Provider',
    spec: without({ ...providerSpec(), type: 'openai-compatible' }, 'credentials'),
    field: 'spec.baseURL',
  },
  {
    what: 'openai without credentials (CEL)',
    kind: 'Provider',
    spec: without(providerSpec(), 'credentials'),
    field: 'spec.credentials',
  },
  {
    what: 'timeouts.firstByteMs > timeouts.totalMs (CEL)',
    kind: 'Provider',
    spec: { ...providerSpec(), timeouts: { firstByteMs: 90_000, totalMs: 60_000 } },
    field: 'spec.timeouts.firstByteMs',
  },
  {
    what: 'timeouts.firstByteMs above the defaulted totalMs (CEL after defaulting)',
    kind: 'Provider',
    spec: { ...providerSpec(), timeouts: { firstByteMs: 400_000 } },
    field: 'spec.timeouts.firstByteMs',
  },
  {
    what: 'timeouts.connectMs of 0',
    kind: 'Provider',
    spec: { ...providerSpec(), timeouts: { connectMs: 0 } },
    field: 'spec.timeouts.connectMs',
  },
  { what: 'empty models', kind: 'Provider', spec: { ...providerSpec(), models: [] }, field: 'spec.models' },
  { what: 'missing models', kind: 'Provider', spec: without(providerSpec(), 'models'), field: 'spec.models' },
  {
    what: 'a model listed twice (map keyed by name)',
    kind: 'Provider',
    spec: { ...providerSpec(), models: [{ name: 'gpt-4o' }, { name: 'gpt-4o' }] },
    field: 'spec.models[1]',
  },
  {
    what: 'model requestTypes with an unknown type',
    kind: 'Provider',
    spec: { ...providerSpec(), models: [{ name: 'gpt-4o', requestTypes: ['chat', 'video'] }] },
    field: 'spec.models[0].requestTypes[1]',
  },
  {
    what: 'model pricing not a decimal',
    kind: 'Provider',
    spec: { ...providerSpec(), models: [{ name: 'gpt-4o', pricing: { inputUsdPerMTok: '2,50' } }] },
    field: 'spec.models[0].pricing.inputUsdPerMTok',
  },
  {
    what: 'baseURL not http(s)',
    kind: 'Provider',
    spec: { ...providerSpec(), baseURL: 'ftp://api.example.com' },
    field: 'spec.baseURL',
  },
  {
    what: 'credentials.secretRef without name',
    kind: 'Provider',
    spec: { ...providerSpec(), credentials: { secretRef: { key: 'apiKey' } } },
    field: 'spec.credentials.secretRef.name',
  },
  // ApiKey
  {
    what: 'unknown scope',
    kind: 'ApiKey',
    spec: { ...apiKeySpec(), scopes: ['ai', 'admin'] },
    field: 'spec.scopes[1]',
  },
  { what: 'no scopes', kind: 'ApiKey', spec: { ...apiKeySpec(), scopes: [] }, field: 'spec.scopes' },
  {
    what: 'expiresAt not a date-time',
    kind: 'ApiKey',
    spec: { ...apiKeySpec(), expiresAt: 'next tuesday' },
    field: 'spec.expiresAt',
  },
  {
    what: 'rotation grace period over 30 days',
    kind: 'ApiKey',
    spec: { ...apiKeySpec(), rotation: { gracePeriodSeconds: 2_592_001 } },
    field: 'spec.rotation.gracePeriodSeconds',
  },
  { what: 'missing projectRef', kind: 'ApiKey', spec: { scopes: ['ai'] }, field: 'spec.projectRef' },
  // Project
  {
    what: 'webhook url not http(s)',
    kind: 'Project',
    spec: { webhooks: [{ ...webhook(), url: 'ftp://hooks.example.com' }] },
    field: 'spec.webhooks[0].url',
  },
  {
    what: 'webhook with no events',
    kind: 'Project',
    spec: { webhooks: [{ ...webhook(), events: [] }] },
    field: 'spec.webhooks[0].events',
  },
  {
    what: 'webhook with an unknown event',
    kind: 'Project',
    spec: { webhooks: [{ ...webhook(), events: ['ai.response', 'ai.everything'] }] },
    field: 'spec.webhooks[0].events[1]',
  },
  {
    what: 'webhook without secretRef',
    kind: 'Project',
    spec: { webhooks: [without(webhook(), 'secretRef')] },
    field: 'spec.webhooks[0].secretRef',
  },
  {
    what: 'rateLimit.requestsPerMinute of 0',
    kind: 'Project',
    spec: { rateLimit: { requestsPerMinute: 0 } },
    field: 'spec.rateLimit.requestsPerMinute',
  },
];

describe('CRDs on a real API server', () => {
  beforeAll(async () => {
    cluster = await startCluster({ controllerManager: false });
  }, START_MS);

  afterAll(async () => {
    if (cluster && !cluster.started) await cluster.kubectl(['delete', 'namespace', NS, '--wait=false']);
    await cluster?.stop();
  }, 60_000);

  describe('installation', () => {
    it('applies crds/ server-side and the CRDs become Established', async () => {
      const out = await ok(['apply', '--server-side', '-f', `${root}/crds/`]);
      for (const plural of ['projects', 'providers', 'workflows', 'apikeys', 'spendcaps'])
        expect(out).toContain(`${plural}.switchyard.dev`);
      const waited = await ok([
        'wait',
        '--for',
        'condition=established',
        '--timeout=60s',
        'crd',
        'projects.switchyard.dev',
        'providers.switchyard.dev',
        'workflows.switchyard.dev',
        'apikeys.switchyard.dev',
        'spendcaps.switchyard.dev',
      ]);
      expect(waited.match(/condition met/g)).toHaveLength(5);
    });

    it('applies every example server-side (namespace first)', async () => {
      const out = await ok(['apply', '--server-side', '-R', '-f', `${root}/examples/`]);
      expect(out).toMatch(/^namespace\/acme serverside-applied/);
      for (const line of [
        'project.switchyard.dev/storefront',
        'provider.switchyard.dev/openai',
        'provider.switchyard.dev/anthropic',
        'workflow.switchyard.dev/support-chat',
        'workflow.switchyard.dev/invoice-extract',
        'workflow.switchyard.dev/product-embeddings',
        'apikey.switchyard.dev/storefront-backend',
        'spendcap.switchyard.dev/storefront-monthly',
        'spendcap.switchyard.dev/invoice-extract-primary-daily',
      ])
        expect(out).toContain(`${line} serverside-applied`);
      // The suite's own namespace, for the objects below.
      await ok(
        ['apply', '--server-side', '-f', '-'],
        stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
      );
    });
  });

  describe('validation', () => {
    it('the base specs of the invalid cases are valid', async () => {
      const docs = [
        object('Workflow', 'base-workflow', workflowSpec()),
        object('Provider', 'base-provider', providerSpec()),
        object('SpendCap', 'base-spendcap', spendCapSpec()),
        object('ApiKey', 'base-apikey', apiKeySpec()),
        object('Project', 'base-project', projectSpec()),
        object('Workflow', 'ten-backups', { ...workflowSpec(), backups: backups(10) }),
        object('SpendCap', 'slot-backup-10', {
          ...spendCapSpec(),
          scope: 'workflow',
          workflowRef: { name: 'support-chat' },
          slot: 'backup-10',
        }),
        object('Provider', 'compatible-no-auth', {
          type: 'openai-compatible',
          baseURL: 'http://127.0.0.1:8000/v1',
          models: [{ name: 'local' }],
        }),
        object('ApiKey', 'expiring', { ...apiKeySpec(), expiresAt: '2030-01-01T00:00:00Z' }),
      ];
      const out = await ok(
        ['apply', '--server-side', '-f', '-'],
        docs.map((d) => stringify(d)).join('---\n'),
      );
      expect(out.match(/serverside-applied/g)).toHaveLength(docs.length);
    });

    it(`refuses at least 20 invalid objects (${INVALID.length})`, () => {
      expect(INVALID.length).toBeGreaterThanOrEqual(20);
    });

    it.each(INVALID.map((c, i) => ({ ...c, name: `invalid-${i}` })))(
      '$kind: $what → $field',
      async ({ kind, spec, field: path, name }) => {
        const r = await kubectl(['create', '-f', '-'], stringify(object(kind, name, spec)));
        expect(r.code, `accepted:\n${r.stdout}`).not.toBe(0);
        expect(r.stderr).toContain(`"${name}" is invalid`);
        expect(r.stderr).toContain(path);
      },
    );

    it('server-side apply refuses invalid objects the same way', async () => {
      const r = await kubectl(
        ['apply', '--server-side', '-f', '-'],
        stringify(
          object('SpendCap', 'ssa-invalid', { ...spendCapSpec(), scope: 'workflow', limitUsd: '1e3' }),
        ),
      );
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('spec.limitUsd');
      expect(r.stderr).toContain('a workflow-scope SpendCap needs workflowRef and slot');
      expect((await kubectl(['get', 'spendcap', 'ssa-invalid', '-n', NS])).code).not.toBe(0);
    });

    it('unknown fields (a typo) are refused, not silently pruned', async () => {
      const r = await kubectl(
        ['apply', '--server-side', '-f', '-'],
        stringify(object('Workflow', 'typo', { ...workflowSpec(), requestTyp: 'image' })),
      );
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('spec.requestTyp');
    });
  });

  describe('defaulting', () => {
    it('Workflow: requestType chat, testMode false', async () => {
      await ok(
        ['apply', '--server-side', '-f', '-'],
        stringify(object('Workflow', 'defaults', workflowSpec())),
      );
      const spec = field(await getJson('workflow', 'defaults'), 'spec');
      expect(spec.requestType).toBe('chat');
      expect(spec.testMode).toBe(false);
      // Nested defaults apply once the parent object is present.
      await ok(
        ['apply', '--server-side', '-f', '-'],
        stringify(object('Workflow', 'defaults-memory', { ...workflowSpec(), sessionMemory: {} })),
      );
      const memory = field(field(await getJson('workflow', 'defaults-memory'), 'spec'), 'sessionMemory');
      expect(memory).toEqual({ enabled: false, summarizeAtTokens: 2000, ttlSeconds: 86_400 });
    });

    it('Provider: timeouts, streaming, model requestTypes, secret key', async () => {
      await ok(
        ['apply', '--server-side', '-f', '-'],
        stringify(
          object('Provider', 'defaults', {
            type: 'anthropic',
            credentials: { secretRef: { name: 'anthropic-credentials' } },
            models: [{ name: 'claude-haiku-4-5' }],
          }),
        ),
      );
      const spec = field(await getJson('provider', 'defaults'), 'spec');
      expect(spec.timeouts).toEqual({ connectMs: 5000, firstByteMs: 60000, totalMs: 300000 });
      expect(spec.streaming).toBe(true);
      expect(spec.models).toEqual([{ name: 'claude-haiku-4-5', requestTypes: ['chat'] }]);
      expect(field(spec, 'credentials')).toEqual({
        secretRef: { name: 'anthropic-credentials', key: 'apiKey' },
      });

      // A partial timeouts object gets the missing fields.
      await ok(
        ['apply', '--server-side', '-f', '-'],
        stringify(
          object('Provider', 'defaults-partial', { ...providerSpec(), timeouts: { totalMs: 90_000 } }),
        ),
      );
      const partial = field(await getJson('provider', 'defaults-partial'), 'spec');
      expect(partial.timeouts).toEqual({ connectMs: 5000, firstByteMs: 60000, totalMs: 90000 });
    });

    it('ApiKey: scopes [ai], revoked false', async () => {
      await ok(['apply', '--server-side', '-f', '-'], stringify(object('ApiKey', 'defaults', apiKeySpec())));
      const spec = field(await getJson('apikey', 'defaults'), 'spec');
      expect(spec.scopes).toEqual(['ai']);
      expect(spec.revoked).toBe(false);
    });

    it('Project: compatibleApi enabled, webhook events', async () => {
      await ok(
        ['apply', '--server-side', '-f', '-'],
        stringify(object('Project', 'defaults', { webhooks: [without(webhook(), 'events')] })),
      );
      const spec = field(await getJson('project', 'defaults'), 'spec');
      expect(spec.compatibleApi).toEqual({ enabled: true });
      expect((spec.webhooks as Json[])[0]?.events).toEqual(['ai.response', 'task.ai_generated']);
      expect(field(field((spec.webhooks as Json[])[0] ?? {}, 'secretRef'), 'key')).toBe('secret');
    });
  });

  describe('kubectl explain', () => {
    const explain = async (path: string) => (await ok(['explain', path])).replace(/\s+/g, ' ');

    it('workflow.spec.backups', async () => {
      const text = await explain('workflow.spec.backups');
      expect(text).toContain('Ordered failover targets; position = index + 1, slot name backup-<position>.');
      expect(text).toContain('Model of the backup; must be listed by that Provider.');
    });

    it('spendcap.spec.limitUsd', async () => {
      expect(await explain('spendcap.spec.limitUsd')).toContain(
        'Spend limit per period. Non-negative decimal string in US dollars, e.g. "2.50".',
      );
    });

    it('provider.spec.models.pricing', async () => {
      const text = await explain('provider.spec.models.pricing');
      expect(text).toContain('Prices used for spend accounting and spend caps.');
      expect(text).toContain('Price of one million input (prompt) tokens.');
    });
  });

  describe('kubectl get columns', () => {
    const columns = (header: string) => header.trim().split(/\s{2,}/);

    it('workflows: PROJECT TYPE PROVIDER MODEL BACKUPS READY and the support-chat row', async () => {
      const lines = (await ok(['get', 'workflows', '-n', 'acme'])).trim().split('\n');
      expect(columns(lines[0] ?? '')).toEqual([
        'NAME',
        'PROJECT',
        'TYPE',
        'PROVIDER',
        'MODEL',
        'BACKUPS',
        'READY',
        'AGE',
      ]);
      const row = lines.find((l) => l.startsWith('support-chat '));
      expect(row?.split(/\s+/).slice(0, 5)).toEqual([
        'support-chat',
        'storefront',
        'chat',
        'openai',
        'gpt-4o-mini',
      ]);
      expect(lines.some((l) => l.startsWith('invoice-extract '))).toBe(true);
      expect(lines.some((l) => l.startsWith('product-embeddings '))).toBe(true);
      // -o wide adds the priority-1 columns.
      const wide = (await ok(['get', 'workflows', '-n', 'acme', '-o', 'wide'])).split('\n')[0] ?? '';
      expect(columns(wide)).toEqual(expect.arrayContaining(['TEST', 'REASON']));
    });

    it('spendcaps: PERIOD LIMIT SPENT STATE', async () => {
      const lines = (await ok(['get', 'spendcaps', '-n', 'acme'])).trim().split('\n');
      const header = columns(lines[0] ?? '');
      expect(header).toEqual(
        expect.arrayContaining(['PROJECT', 'SCOPE', 'PERIOD', 'LIMIT', 'SPENT', 'STATE', 'READY']),
      );
      const row = lines.find((l) => l.startsWith('storefront-monthly '));
      expect(row?.split(/\s+/).slice(0, 5)).toEqual([
        'storefront-monthly',
        'storefront',
        'project',
        'monthly',
        '50.00',
      ]);
    });

    it('providers, apikeys, projects print their columns', async () => {
      const providers = (await ok(['get', 'providers', '-n', 'acme'])).split('\n')[0] ?? '';
      expect(columns(providers)).toEqual(['NAME', 'TYPE', 'MODELS', 'READY', 'AGE']);
      const keys = (await ok(['get', 'apikeys', '-n', 'acme'])).split('\n');
      expect(columns(keys[0] ?? '')).toEqual(
        expect.arrayContaining(['PROJECT', 'PREFIX', 'SCOPES', 'REVOKED']),
      );
      expect(keys.find((l) => l.startsWith('storefront-backend '))).toMatch(
        /^storefront-backend\s+storefront\s+/,
      );
      expect(await ok(['get', 'projects', '-n', 'acme'])).toMatch(/^NAME\s/);
    });

    it('status written through the subresource fills BACKUPS, READY, SPENT and STATE', async () => {
      // In the suite's namespace, so a shared cluster's examples (and an operator there) are untouched.
      await ok(
        ['apply', '--server-side', '-f', '-'],
        [
          object('Workflow', 'columns', {
            ...workflowSpec(),
            backups: [{ provider: 'anthropic', model: 'claude-haiku-4-5' }],
          }),
          object('SpendCap', 'columns', spendCapSpec()),
        ]
          .map((d) => stringify(d))
          .join('---\n'),
      );
      const row = async (resource: string) =>
        (await ok(['get', resource, 'columns', '-n', NS, '--no-headers'])).trim().split(/\s+/);
      expect(await row('workflow')).toEqual([
        'columns',
        'storefront',
        'chat',
        'openai',
        'gpt-4o-mini',
        expect.any(String),
      ]);

      const status = {
        status: {
          backups: 1,
          route: 'openai/gpt-4o-mini',
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Compiled',
              message: 'part of the snapshot',
              lastTransitionTime: '2025-01-01T00:00:00Z',
            },
          ],
        },
      };
      const patchStatus = (resource: string, body: Json) =>
        ok([
          'patch',
          resource,
          'columns',
          '-n',
          NS,
          '--subresource=status',
          '--type=merge',
          '-p',
          JSON.stringify(body),
        ]);
      await patchStatus('workflow', status);
      expect((await row('workflow')).slice(0, 7)).toEqual([
        'columns',
        'storefront',
        'chat',
        'openai',
        'gpt-4o-mini',
        '1',
        'True',
      ]);

      await patchStatus('spendcap', { status: { spentUsd: '8.20', state: 'warning' } });
      expect((await row('spendcap')).slice(0, 7)).toEqual([
        'columns',
        'storefront',
        'project',
        'monthly',
        '10.00',
        '8.20',
        'warning',
      ]);
    });
  });

  describe('status subresource', () => {
    const ready = {
      type: 'Ready',
      status: 'True',
      reason: 'Compiled',
      message: 'ok',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    };

    it('apply and replace of the main resource drop status; the status subresource sets it', async () => {
      const wf = object('Workflow', 'status-test', workflowSpec(), {
        status: { backups: 7, conditions: [ready] },
      });
      await ok(['apply', '--server-side', '-f', '-'], stringify(wf));
      expect((await getJson('workflow', 'status-test')).status).toBeUndefined();

      await ok(
        ['create', '-f', '-'],
        stringify(object('Workflow', 'status-create', workflowSpec(), { status: { backups: 7 } })),
      );
      expect((await getJson('workflow', 'status-create')).status).toBeUndefined();

      const current = await getJson('workflow', 'status-test');
      const replaced = {
        ...current,
        spec: { ...field(current, 'spec'), model: 'gpt-4o' },
        status: { backups: 9 },
      };
      await ok(['replace', '-f', '-'], JSON.stringify(replaced));
      const afterReplace = await getJson('workflow', 'status-test');
      expect(field(afterReplace, 'spec').model).toBe('gpt-4o');
      expect(afterReplace.status).toBeUndefined();

      await ok([
        'patch',
        'workflow',
        'status-test',
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { backups: 2, apiName: 'status-test', conditions: [ready] } }),
      ]);
      const patched = await getJson('workflow', 'status-test');
      expect(field(patched, 'status').backups).toBe(2);
      expect(field(patched, 'status').apiName).toBe('status-test');

      // Once status exists, a main-resource apply/replace with another status leaves it alone.
      await ok(
        ['apply', '--server-side', '-f', '-'],
        stringify(
          object(
            'Workflow',
            'status-test',
            { ...workflowSpec(), model: 'gpt-4o' },
            { status: { backups: 5 } },
          ),
        ),
      );
      const afterApply = await getJson('workflow', 'status-test');
      expect(field(afterApply, 'status').backups).toBe(2);
      await ok(['replace', '-f', '-'], JSON.stringify({ ...afterApply, status: { backups: 8 } }));
      expect(field(await getJson('workflow', 'status-test'), 'status').backups).toBe(2);
      // ...and a plain merge patch of status on the main resource is ignored as well.
      await ok([
        'patch',
        'workflow',
        'status-test',
        '-n',
        NS,
        '--type=merge',
        '-p',
        '{"status":{"backups":6}}',
      ]);
      expect(field(await getJson('workflow', 'status-test'), 'status').backups).toBe(2);
    });

    it('a status patch cannot change spec', async () => {
      const before = await getJson('workflow', 'status-test');
      await ok([
        'patch',
        'workflow',
        'status-test',
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { model: 'changed-by-status', provider: 'other' }, status: { backups: 3 } }),
      ]);
      const after = await getJson('workflow', 'status-test');
      expect(after.spec).toEqual(before.spec);
      expect(field(after, 'status').backups).toBe(3);
      // Status writes do not bump metadata.generation; spec writes do.
      expect(field(after, 'metadata').generation).toBe(field(before, 'metadata').generation);
    });

    it('status is validated by its schema too', async () => {
      const r = await kubectl([
        'patch',
        'spendcap',
        'columns',
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { state: 'bankrupt' } }),
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('status.state');
    });
  });
});
