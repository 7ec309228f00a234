import { describe, expect, it } from 'vitest';
import {
  hashApiKey,
  SealError,
  type Snapshot,
  snapshotProject,
  snapshot as snapshotSchema,
  unseal,
  WEBHOOK_EVENT_TYPES,
} from '#contract';
import { compileSnapshot, generatedKeySecretName, type Reason, type Verdict } from '#operator/compiler/index';
import { type SwitchyardKind, switchyardObject } from '#operator/resources/index';
import {
  ANTHROPIC_KEY,
  API_KEY,
  API_KEY_2,
  baseFixture,
  compile,
  type Fixture,
  get,
  inSnapshot,
  NOW,
  NS,
  OPENAI_KEY,
  OTHER_SEAL_KEY,
  PREVIOUS_API_KEY,
  parseAll,
  remove,
  SEAL_KEY,
  secretOf,
  WEBHOOK_SECRET,
} from './fixtures.ts';

interface Expected {
  kind: SwitchyardKind;
  /** Defaults to the fixture namespace. */
  ns?: string;
  name: string;
  ok: boolean;
  reason: Reason | 'Valid';
  messageContains: string;
  /** Whether the object is part of the snapshot; defaults to `ok`. */
  inSnapshot?: boolean;
}

interface Case {
  title: string;
  mutate: (f: Fixture) => void;
  expected: Expected[];
  check?: (s: Snapshot) => void;
}

const verdictOf = (verdicts: Verdict[], kind: SwitchyardKind, name: string, ns: string = NS): Verdict => {
  const v = verdicts.find((x) => x.ref.kind === kind && x.ref.name === name && x.ref.namespace === ns);
  if (!v) throw new Error(`no verdict for ${kind} ${ns}/${name}`);
  return v;
};

const laterWorkflow = (name: string, apiName: string, created: string) => (f: Fixture) => {
  f.objects.push({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace: NS, creationTimestamp: created },
    spec: { projectRef: { name: 'shop' }, name: apiName, provider: 'anthropic', model: 'claude-haiku-4-5' },
  });
};

const secondProject = (f: Fixture) => {
  f.objects.push({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Project',
    metadata: { name: 'blog', namespace: NS },
  });
};

const cases: Case[] = [
  // --- unknown project -------------------------------------------------------------------------
  {
    title: 'workflow of an unknown project',
    mutate: (f) => {
      get(f, 'Workflow', 'embed').spec.projectRef = { name: 'nope' };
    },
    expected: [
      {
        kind: 'Workflow',
        name: 'embed',
        ok: false,
        reason: 'ProjectNotFound',
        messageContains: 'Project "nope" not found',
      },
    ],
  },
  {
    title: 'api key of an unknown project',
    mutate: (f) => {
      get(f, 'ApiKey', 'backend').spec.projectRef = { name: 'nope' };
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'ProjectNotFound',
        messageContains: 'Project "nope"',
      },
    ],
  },
  {
    title: 'spend cap of an unknown project',
    mutate: (f) => {
      get(f, 'SpendCap', 'monthly').spec.projectRef = { name: 'nope' };
    },
    expected: [
      {
        kind: 'SpendCap',
        name: 'monthly',
        ok: false,
        reason: 'ProjectNotFound',
        messageContains: 'Project "nope"',
      },
    ],
  },
  {
    title: 'a project of the same name in another namespace does not count',
    mutate: (f) => {
      f.objects.push({
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'support', namespace: 'other' },
        spec: { projectRef: { name: 'shop' }, provider: 'openai', model: 'gpt-4o-mini' },
      });
    },
    expected: [
      {
        kind: 'Workflow',
        ns: 'other',
        name: 'support',
        ok: false,
        reason: 'ProjectNotFound',
        messageContains: 'namespace other',
      },
      { kind: 'Workflow', name: 'support', ok: true, reason: 'Valid', messageContains: 'project acme.shop' },
    ],
  },
  // --- providers and models ----------------------------------------------------------------------
  {
    title: 'unknown primary provider',
    mutate: (f) => {
      get(f, 'Workflow', 'support').spec.provider = 'mistral';
    },
    expected: [
      {
        kind: 'Workflow',
        name: 'support',
        ok: false,
        reason: 'ProviderNotFound',
        messageContains: 'primary: Provider "mistral" not found',
      },
    ],
  },
  {
    title: 'unknown backup-2 provider',
    mutate: (f) => {
      get(f, 'Workflow', 'support').spec.backups?.push({ provider: 'ghost', model: 'x' });
    },
    expected: [
      {
        kind: 'Workflow',
        name: 'support',
        ok: false,
        reason: 'ProviderNotFound',
        messageContains: 'backup-2: Provider "ghost"',
      },
    ],
  },
  {
    title: 'provider not ready because its Secret is missing',
    mutate: (f) => remove(f, 'Secret', 'anthropic-creds'),
    expected: [
      {
        kind: 'Provider',
        name: 'anthropic',
        ok: false,
        reason: 'SecretMissing',
        messageContains: 'Secret "anthropic-creds" not found',
      },
      {
        kind: 'Workflow',
        name: 'support',
        ok: false,
        reason: 'ProviderNotReady',
        messageContains: 'backup-1: Provider "anthropic" is not ready',
      },
      { kind: 'Workflow', name: 'embed', ok: true, reason: 'Valid', messageContains: '"embed"' },
      // The cap's workflow is gone, so the cap says why.
      {
        kind: 'SpendCap',
        name: 'support-primary',
        ok: false,
        reason: 'WorkflowNotReady',
        messageContains: 'ProviderNotReady',
      },
    ],
  },
  {
    title: 'model not offered by the provider',
    mutate: (f) => {
      get(f, 'Workflow', 'support').spec.model = 'gpt-5';
    },
    expected: [
      {
        kind: 'Workflow',
        name: 'support',
        ok: false,
        reason: 'ModelNotFound',
        messageContains: 'primary: model "gpt-5" is not offered',
      },
    ],
  },
  {
    title: 'embedding workflow on a chat-only model',
    mutate: (f) => {
      get(f, 'Workflow', 'embed').spec.model = 'gpt-4o-mini';
    },
    expected: [
      {
        kind: 'Workflow',
        name: 'embed',
        ok: false,
        reason: 'ModelDoesNotSupportRequestType',
        messageContains: 'does not support request type "embedding"',
      },
    ],
  },
  {
    title: 'backup whose model does not support the request type',
    mutate: (f) => {
      get(f, 'Workflow', 'embed').spec.backups = [{ provider: 'anthropic', model: 'claude-haiku-4-5' }];
    },
    expected: [
      {
        kind: 'Workflow',
        name: 'embed',
        ok: false,
        reason: 'ModelDoesNotSupportRequestType',
        messageContains: 'backup-1: model',
      },
    ],
  },
  // --- workflow names ----------------------------------------------------------------------------
  {
    title: 'duplicate workflow name (spec.name of a newer object)',
    mutate: laterWorkflow('support-v2', 'support', '2025-02-01T00:00:00Z'),
    expected: [
      {
        kind: 'Workflow',
        name: 'support-v2',
        ok: false,
        reason: 'DuplicateWorkflowName',
        messageContains: 'workflow name "support" is already used in project acme.shop by Workflow "support"',
      },
      { kind: 'Workflow', name: 'support', ok: true, reason: 'Valid', messageContains: '"support"' },
    ],
    check: (s) => expect(s.projects['acme.shop']?.workflows['support']?.source).toBe('acme/support'),
  },
  {
    title: 'duplicate workflow name (metadata.name of the newer object clashes with an older spec.name)',
    mutate: laterWorkflow('old-embedder', 'embed', '2024-06-01T00:00:00Z'),
    expected: [
      {
        kind: 'Workflow',
        name: 'embed',
        ok: false,
        reason: 'DuplicateWorkflowName',
        messageContains: 'Workflow "old-embedder"',
      },
      { kind: 'Workflow', name: 'old-embedder', ok: true, reason: 'Valid', messageContains: '"embed"' },
    ],
    check: (s) => expect(s.projects['acme.shop']?.workflows['embed']?.source).toBe('acme/old-embedder'),
  },
  {
    title: 'duplicate workflow name: age decides, not how the timestamp is written',
    // 2024-12-31T23:30:00-01:00 is 2025-01-01T00:30:00Z: newer than the base objects although it sorts first as text.
    mutate: laterWorkflow('support-v2', 'support', '2024-12-31T23:30:00-01:00'),
    expected: [
      {
        kind: 'Workflow',
        name: 'support-v2',
        ok: false,
        reason: 'DuplicateWorkflowName',
        messageContains: 'Workflow "support"',
      },
      { kind: 'Workflow', name: 'support', ok: true, reason: 'Valid', messageContains: '"support"' },
    ],
  },
  {
    title: 'same workflow name in two projects',
    mutate: (f) => {
      secondProject(f);
      f.objects.push({
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'blog-support', namespace: NS, creationTimestamp: '2025-03-01T00:00:00Z' },
        spec: {
          projectRef: { name: 'blog' },
          name: 'support',
          provider: 'anthropic',
          model: 'claude-haiku-4-5',
        },
      });
    },
    expected: [
      {
        kind: 'Workflow',
        name: 'blog-support',
        ok: true,
        reason: 'Valid',
        messageContains: 'project acme.blog',
      },
      { kind: 'Workflow', name: 'support', ok: true, reason: 'Valid', messageContains: 'project acme.shop' },
    ],
    check: (s) => {
      expect(s.projects['acme.blog']?.workflows['support']?.source).toBe('acme/blog-support');
      expect(s.projects['acme.shop']?.workflows['support']?.source).toBe('acme/support');
    },
  },
  // --- secrets -----------------------------------------------------------------------------------
  {
    title: 'missing Secret of an api key',
    mutate: (f) => {
      get(f, 'ApiKey', 'backend').spec.secretRef = { name: 'nope' };
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'SecretMissing',
        messageContains: 'Secret "nope" not found',
      },
    ],
  },
  {
    title: 'provider Secret without the key',
    mutate: (f) => {
      secretOf(f, 'openai-creds').data = { token: OPENAI_KEY };
    },
    expected: [
      {
        kind: 'Provider',
        name: 'openai',
        ok: false,
        reason: 'SecretMissing',
        messageContains: 'has no key "apiKey"',
      },
      {
        kind: 'Workflow',
        name: 'embed',
        ok: false,
        reason: 'ProviderNotReady',
        messageContains: 'primary: Provider "openai"',
      },
    ],
  },
  {
    title: 'api key Secret without the key',
    mutate: (f) => {
      get(f, 'ApiKey', 'backend').spec.secretRef = { name: 'shop-key', key: 'token' };
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'SecretMissing',
        messageContains: 'has no key "token"',
      },
    ],
  },
  {
    title: 'empty provider Secret value',
    mutate: (f) => {
      secretOf(f, 'anthropic-creds').data['apiKey'] = '';
    },
    expected: [
      { kind: 'Provider', name: 'anthropic', ok: false, reason: 'SecretEmpty', messageContains: 'is empty' },
    ],
  },
  {
    title: 'blank api key Secret value',
    mutate: (f) => {
      secretOf(f, 'shop-key').data['apiKey'] = ' \n';
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'SecretEmpty',
        messageContains: 'key "apiKey" is empty',
      },
    ],
  },
  // --- api keys ----------------------------------------------------------------------------------
  {
    title: 'expired key',
    mutate: (f) => {
      get(f, 'ApiKey', 'backend').spec.expiresAt = '2025-05-01T00:00:00Z';
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'KeyExpired',
        messageContains: '2025-05-01T00:00:00Z',
      },
    ],
  },
  {
    title: 'key expiring exactly now',
    mutate: (f) => {
      get(f, 'ApiKey', 'backend').spec.expiresAt = NOW.toISOString();
    },
    expected: [
      { kind: 'ApiKey', name: 'backend', ok: false, reason: 'KeyExpired', messageContains: 'expired' },
    ],
  },
  {
    title: 'key with an unreadable expiresAt is refused, not crashing the compile',
    mutate: (f) => {
      get(f, 'ApiKey', 'backend').spec.expiresAt = 'next tuesday';
    },
    expected: [
      { kind: 'ApiKey', name: 'backend', ok: false, reason: 'KeyExpired', messageContains: '"next tuesday"' },
    ],
  },
  {
    title: 'key expiring later is active until then',
    mutate: (f) => {
      get(f, 'ApiKey', 'backend').spec.expiresAt = '2025-07-01T00:00:00+02:00';
    },
    expected: [{ kind: 'ApiKey', name: 'backend', ok: true, reason: 'Valid', messageContains: 'is active' }],
    check: (s) => expect(s.apiKeys[hashApiKey(API_KEY)]?.notAfter).toBe('2025-06-30T22:00:00.000Z'),
  },
  {
    title: 'revoked key',
    mutate: (f) => {
      get(f, 'ApiKey', 'backend').spec.revoked = true;
    },
    expected: [
      { kind: 'ApiKey', name: 'backend', ok: false, reason: 'KeyRevoked', messageContains: 'revoked' },
    ],
  },
  {
    title: 'malformed key: wrong prefix',
    mutate: (f) => {
      secretOf(f, 'shop-key').data['apiKey'] = 'sk_live_AAAAbbbbCCCCddddEEEEffff0001';
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'KeyMalformed',
        messageContains: 'must start with sy_live_',
      },
    ],
  },
  {
    title: 'malformed key: too short',
    mutate: (f) => {
      secretOf(f, 'shop-key').data['apiKey'] = 'sy_live_short';
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'KeyMalformed',
        messageContains: 'at least 32 characters',
      },
    ],
  },
  {
    title: 'malformed key: characters outside [A-Za-z0-9_]',
    mutate: (f) => {
      secretOf(f, 'shop-key').data['apiKey'] = 'sy_live_AAAA-bbbbCCCCddddEEEEffff0001';
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'KeyMalformed',
        messageContains: 'only letters, digits and _',
      },
    ],
  },
  {
    title: 'key pending: no secretRef and no generated Secret yet',
    mutate: (f) => {
      delete get(f, 'ApiKey', 'backend').spec.secretRef;
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'backend',
        ok: false,
        reason: 'KeyPending',
        messageContains: `Secret "${generatedKeySecretName('backend')}"`,
      },
    ],
  },
  {
    title: 'no secretRef and the generated Secret exists',
    mutate: (f) => {
      delete get(f, 'ApiKey', 'backend').spec.secretRef;
      f.secrets.push({ namespace: NS, name: generatedKeySecretName('backend'), data: { apiKey: API_KEY_2 } });
    },
    expected: [{ kind: 'ApiKey', name: 'backend', ok: true, reason: 'Valid', messageContains: 'is active' }],
    check: (s) => expect(s.apiKeys[hashApiKey(API_KEY_2)]?.keyId).toBe('acme/backend'),
  },
  {
    title: 'the same key in two ApiKeys: the newer one is refused',
    mutate: (f) => {
      f.objects.push({
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'ApiKey',
        metadata: { name: 'aaa-copy', namespace: NS, creationTimestamp: '2025-03-01T00:00:00Z' },
        spec: { projectRef: { name: 'shop' }, secretRef: { name: 'shop-key' } },
      });
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'aaa-copy',
        ok: false,
        reason: 'DuplicateKey',
        messageContains: 'already used by ApiKey acme/backend',
      },
      { kind: 'ApiKey', name: 'backend', ok: true, reason: 'Valid', messageContains: 'is active' },
    ],
    check: (s) => expect(s.apiKeys[hashApiKey(API_KEY)]?.keyId).toBe('acme/backend'),
  },
  {
    title: 'the same key in two ApiKeys: age decides, not how the timestamp is written',
    mutate: (f) => {
      f.objects.push({
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'ApiKey',
        // 2025-01-01T00:00:00.500Z is half a second after the base objects were created.
        metadata: { name: 'aaa-copy', namespace: NS, creationTimestamp: '2025-01-01T00:00:00.500Z' },
        spec: { projectRef: { name: 'shop' }, secretRef: { name: 'shop-key' } },
      });
    },
    expected: [
      {
        kind: 'ApiKey',
        name: 'aaa-copy',
        ok: false,
        reason: 'DuplicateKey',
        messageContains: 'acme/backend',
      },
      { kind: 'ApiKey', name: 'backend', ok: true, reason: 'Valid', messageContains: 'is active' },
    ],
  },
  // --- spend caps --------------------------------------------------------------------------------
  {
    title: 'spend cap on a slot the workflow does not have',
    mutate: (f) => {
      get(f, 'SpendCap', 'support-primary').spec.slot = 'backup-3';
    },
    expected: [
      {
        kind: 'SpendCap',
        name: 'support-primary',
        ok: false,
        reason: 'SlotNotFound',
        messageContains: 'has no slot backup-3 (it has primary, backup-1)',
      },
    ],
  },
  {
    title: 'spend cap on the last backup slot',
    mutate: (f) => {
      get(f, 'SpendCap', 'support-primary').spec.slot = 'backup-1';
    },
    expected: [
      {
        kind: 'SpendCap',
        name: 'support-primary',
        ok: true,
        reason: 'Valid',
        messageContains: 'support backup-1',
      },
    ],
  },
  {
    title: 'spend cap on backup-1 of a workflow without backups',
    mutate: (f) => {
      const cap = get(f, 'SpendCap', 'support-primary');
      cap.spec.workflowRef = { name: 'embed' };
      cap.spec.slot = 'backup-1';
    },
    expected: [
      {
        kind: 'SpendCap',
        name: 'support-primary',
        ok: false,
        reason: 'SlotNotFound',
        messageContains: '(it has primary)',
      },
    ],
  },
  {
    title: 'spend cap on an unknown workflow',
    mutate: (f) => {
      get(f, 'SpendCap', 'support-primary').spec.workflowRef = { name: 'ghost' };
    },
    expected: [
      {
        kind: 'SpendCap',
        name: 'support-primary',
        ok: false,
        reason: 'WorkflowNotFound',
        messageContains: 'Workflow "ghost" not found',
      },
    ],
  },
  {
    title: 'spend cap on an invalid workflow',
    mutate: (f) => {
      get(f, 'Workflow', 'support').spec.model = 'gpt-5';
    },
    expected: [
      { kind: 'Workflow', name: 'support', ok: false, reason: 'ModelNotFound', messageContains: 'gpt-5' },
      {
        kind: 'SpendCap',
        name: 'support-primary',
        ok: false,
        reason: 'WorkflowNotReady',
        messageContains: 'Workflow "support" is not ready (ModelNotFound)',
      },
    ],
  },
  {
    title: 'spend cap on a workflow of another project in the same namespace',
    mutate: (f) => {
      secondProject(f);
      get(f, 'SpendCap', 'support-primary').spec.projectRef = { name: 'blog' };
    },
    expected: [
      {
        kind: 'SpendCap',
        name: 'support-primary',
        ok: false,
        reason: 'WorkflowNotFound',
        messageContains: 'Workflow "support" not found in project acme.blog',
      },
    ],
  },
  {
    title: 'spend cap names the Workflow object; the snapshot names the API workflow',
    mutate: (f) => {
      get(f, 'Workflow', 'support').spec.name = 'Support/Chat';
    },
    expected: [
      {
        kind: 'SpendCap',
        name: 'support-primary',
        ok: true,
        reason: 'Valid',
        messageContains: 'Support/Chat primary',
      },
    ],
    check: (s) =>
      expect(s.projects['acme.shop']?.spendCaps.find((c) => c.id === 'acme/support-primary')).toEqual({
        id: 'acme/support-primary',
        scope: 'workflow',
        workflow: 'Support/Chat',
        slot: 'primary',
        period: 'daily',
        limitUsd: '5',
      }),
  },
  // --- webhooks ----------------------------------------------------------------------------------
  {
    title: 'webhook with a missing secret',
    mutate: (f) => {
      get(f, 'Project', 'shop').spec?.webhooks?.push({
        url: 'https://hooks.example.com/broken',
        secretRef: { name: 'nope' },
      });
    },
    expected: [
      {
        kind: 'Project',
        name: 'shop',
        ok: false,
        reason: 'WebhookSecretMissing',
        messageContains: 'webhooks[1] (https://hooks.example.com/broken) is disabled',
        inSnapshot: true,
      },
    ],
    check: (s) => {
      const project = s.projects['acme.shop'];
      expect(project?.webhooks.map((w) => w.url)).toEqual(['https://hooks.example.com/shop']);
      expect(Object.keys(project?.workflows ?? {}).sort()).toEqual(['embed', 'support']);
    },
  },
];

describe('compileSnapshot verdicts', () => {
  it('the base set is valid in full', () => {
    const f = baseFixture();
    const { snapshot, verdicts } = compile(f);
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    expect(verdicts).toHaveLength(f.objects.length);
    for (const o of f.objects) expect(inSnapshot(snapshot, o.kind, o.metadata.name)).toBe(true);
  });

  describe.each(cases)('$title', ({ mutate, expected, check }) => {
    const f = baseFixture();
    mutate(f);
    // Compiled inside the tests, so a compiler that throws fails them instead of the collection.
    let compiled: ReturnType<typeof compile> | undefined;
    const outcome = () => {
      compiled ??= compile(f);
      return compiled;
    };

    it.each(expected)('$kind $name → $reason', (e) => {
      const { snapshot, verdicts } = outcome();
      const v = verdictOf(verdicts, e.kind, e.name, e.ns);
      expect({ ok: v.ok, reason: v.reason }).toEqual({ ok: e.ok, reason: e.reason });
      expect(v.message).toContain(e.messageContains);
      expect(inSnapshot(snapshot, e.kind, e.name, e.ns)).toBe(e.inSnapshot ?? e.ok);
    });

    it('leaves invalid objects out and keeps every valid one', () => {
      const { snapshot, verdicts } = outcome();
      expect(verdicts).toHaveLength(f.objects.length);
      for (const v of verdicts) {
        const flaggedButServing = v.ref.kind === 'Project' && v.reason === 'WebhookSecretMissing';
        expect(
          inSnapshot(snapshot, v.ref.kind, v.ref.name, v.ref.namespace),
          `${v.ref.kind} ${v.ref.name}`,
        ).toBe(v.ok || flaggedButServing);
      }
    });

    it('still produces a snapshot that passes the contract schema', () => {
      const { snapshot } = outcome();
      expect(snapshotSchema.safeParse(snapshot).success).toBe(true);
      check?.(snapshot);
    });
  });
});

describe('api key rotation grace', () => {
  const withPrevious = (until: string, expiresAt?: string) => {
    const f = baseFixture();
    Object.assign(secretOf(f, 'shop-key').data, {
      previousApiKey: PREVIOUS_API_KEY,
      previousValidUntil: until,
    });
    if (expiresAt) get(f, 'ApiKey', 'backend').spec.expiresAt = expiresAt;
    return compile(f).snapshot;
  };

  it.each([
    {
      title: 'grace running: a second hash until its end',
      until: '2025-06-02T00:00:00Z',
      notAfter: '2025-06-02T00:00:00.000Z',
    },
    {
      title: 'grace running past the key expiry: capped at the expiry',
      until: '2025-06-10T00:00:00Z',
      expiresAt: '2025-06-05T00:00:00Z',
      notAfter: '2025-06-05T00:00:00.000Z',
    },
    { title: 'grace over', until: '2025-06-01T11:59:59Z', notAfter: undefined },
    { title: 'grace ends now', until: NOW.toISOString(), notAfter: undefined },
    { title: 'unreadable end of grace', until: 'soon', notAfter: undefined },
  ])('$title', ({ until, expiresAt, notAfter }) => {
    const s = withPrevious(until, expiresAt);
    const current = s.apiKeys[hashApiKey(API_KEY)];
    expect(current?.keyId).toBe('acme/backend');
    expect(current?.notAfter).toBe(expiresAt ? new Date(expiresAt).toISOString() : undefined);
    const previous = s.apiKeys[hashApiKey(PREVIOUS_API_KEY)];
    if (notAfter === undefined) {
      expect(previous).toBeUndefined();
      expect(Object.keys(s.apiKeys)).toHaveLength(1);
    } else {
      expect(previous).toEqual({ ...current, notAfter });
    }
    expect(JSON.stringify(s)).not.toContain(PREVIOUS_API_KEY);
  });

  it('ignores a malformed previous key', () => {
    const f = baseFixture();
    Object.assign(secretOf(f, 'shop-key').data, {
      previousApiKey: 'old',
      previousValidUntil: '2025-06-02T00:00:00Z',
    });
    expect(Object.keys(compile(f).snapshot.apiKeys)).toEqual([hashApiKey(API_KEY)]);
  });
});

describe('snapshot content', () => {
  it('validates against the contract schema', () => {
    const { snapshot } = compile(baseFixture());
    expect(snapshotSchema.parse(snapshot)).toEqual(snapshot);
    expect(snapshot.generatedAt).toBe(NOW.toISOString());
  });

  it('stores API keys as sha256 hex of the key', () => {
    const { snapshot } = compile(baseFixture());
    const hash = hashApiKey(API_KEY);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(snapshot.apiKeys)).toEqual([hash]);
    expect(snapshot.apiKeys[hash]).toEqual({ projectId: 'acme.shop', keyId: 'acme/backend', scopes: ['ai'] });
  });

  it('holds no plaintext provider key, API key or webhook secret', () => {
    const f = baseFixture();
    Object.assign(secretOf(f, 'shop-key').data, {
      previousApiKey: PREVIOUS_API_KEY,
      previousValidUntil: '2025-06-02T00:00:00Z',
    });
    const text = JSON.stringify(compile(f).snapshot);
    for (const plain of [OPENAI_KEY, ANTHROPIC_KEY, WEBHOOK_SECRET, API_KEY, PREVIOUS_API_KEY])
      expect(text).not.toContain(plain);
    expect(text).not.toContain('PLAINTEXT');
  });

  it('seals provider credentials under provider:<ns>/<name>', () => {
    const { snapshot } = compile(baseFixture());
    const providers = snapshot.projects['acme.shop']?.providers ?? {};
    const openai = providers['openai']?.credential;
    const anthropic = providers['anthropic']?.credential;
    if (!openai || !anthropic) throw new Error('credentials not sealed');
    expect(unseal(SEAL_KEY, 'provider:acme/openai', openai)).toBe(OPENAI_KEY);
    expect(unseal(SEAL_KEY, 'provider:acme/anthropic', anthropic)).toBe(ANTHROPIC_KEY);
    expect(() => unseal(OTHER_SEAL_KEY, 'provider:acme/openai', openai)).toThrow(SealError);
    expect(() => unseal(SEAL_KEY, 'provider:acme/anthropic', openai)).toThrow(SealError);
    expect(() => unseal(SEAL_KEY, 'provider:other/openai', openai)).toThrow(SealError);
  });

  it('seals webhook secrets under webhook:<projectId>:<url>', () => {
    const { snapshot } = compile(baseFixture());
    const hook = snapshot.projects['acme.shop']?.webhooks[0];
    if (!hook) throw new Error('webhook missing');
    expect(unseal(SEAL_KEY, 'webhook:acme.shop:https://hooks.example.com/shop', hook.secret)).toBe(
      WEBHOOK_SECRET,
    );
    expect(hook.events).toEqual(['ai.response', 'task.ai_generated']);
  });

  it('compiles workflows, providers and defaults as the gateway expects them', () => {
    const { snapshot } = compile(baseFixture());
    const project = snapshot.projects['acme.shop'];
    expect(project?.displayName).toBe('Shop');
    expect(project?.compatibleApiEnabled).toBe(true);
    expect(project?.allowPrivateNetworks).toBe(false);
    expect(project?.providers['openai']).toMatchObject({
      name: 'openai',
      type: 'openai',
      baseURL: 'https://api.openai.com/v1',
      streaming: true,
      timeouts: { connectMs: 5000, firstByteMs: 60000, totalMs: 300000 },
      models: {
        'gpt-4o-mini': {
          requestTypes: ['chat', 'completion', 'vision'],
          pricing: { inputUsdPerMTok: '0.15' },
        },
      },
    });
    expect(project?.workflows['support']).toEqual({
      name: 'support',
      source: 'acme/support',
      requestType: 'chat',
      primary: { provider: 'openai', model: 'gpt-4o-mini' },
      backups: [{ provider: 'anthropic', model: 'claude-haiku-4-5' }],
      systemInstructions: 'Be brief.',
      cacheFields: [],
      sessionMemory: { enabled: false, summarizeAtTokens: 2000, ttlSeconds: 86_400 },
      testMode: false,
      createdAt: Date.parse('2025-01-01T00:00:00Z') / 1000,
    });
  });

  it('compiles a hostedTools policy, its default refuse when left out; none is compiled without one', () => {
    const f = baseFixture();
    Object.assign(get(f, 'Workflow', 'support').spec, { hostedTools: { tools: { web_search: 'omit' } } });
    expect(compile(f).snapshot.projects['acme.shop']?.workflows['support']?.hostedTools).toEqual({
      default: 'refuse',
      tools: { web_search: 'omit' },
    });
    expect(compile(baseFixture()).snapshot.projects['acme.shop']?.workflows['support']).not.toHaveProperty(
      'hostedTools',
    );
  });

  it('accepts an openai-compatible provider without credentials (credential null)', () => {
    const f = baseFixture();
    f.objects.push({
      apiVersion: 'switchyard.dev/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'local', namespace: NS },
      spec: { type: 'openai-compatible', baseURL: 'http://vllm.local:8000/v1/', models: [{ name: 'llama' }] },
    });
    const local = compile(f).snapshot.projects['acme.shop']?.providers['local'];
    expect(local?.credential).toBeNull();
    expect(local?.baseURL).toBe('http://vllm.local:8000/v1');
    expect(local?.models['llama']?.requestTypes).toEqual(['chat']);
  });

  it('compiles requestLogs with the CRD defaults when the Project leaves them out', () => {
    const f = baseFixture();
    secondProject(f);
    const { snapshot } = compile(f);
    for (const id of ['acme.shop', 'acme.blog'])
      expect(snapshot.projects[id]?.requestLogs, id).toEqual({ bodies: false, maxEntries: 100_000 });
  });

  it('compiles requestLogs as the Project sets them, one field defaulting without the other', () => {
    const f = baseFixture();
    const spec = get(f, 'Project', 'shop').spec ?? {};
    spec.requestLogs = { bodies: true, maxEntries: 5_000 };
    secondProject(f);
    get(f, 'Project', 'blog').spec = { requestLogs: { maxEntries: 1_000 } };
    const { snapshot, verdicts } = compile(f);
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    expect(snapshot.projects['acme.shop']?.requestLogs).toEqual({ bodies: true, maxEntries: 5_000 });
    expect(snapshot.projects['acme.blog']?.requestLogs).toEqual({ bodies: false, maxEntries: 1_000 });
  });

  it.each([
    ['below the minimum', { maxEntries: 999 }],
    ['above the maximum', { maxEntries: 10_000_001 }],
    ['not an integer', { maxEntries: 1500.5 }],
    ['bodies not a boolean', { bodies: 'yes' }],
  ])('refuses requestLogs %s', (_what, requestLogs) => {
    const f = baseFixture();
    const project = { ...get(f, 'Project', 'shop'), spec: { requestLogs } };
    const parsed = switchyardObject.safeParse(project);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path.slice(0, 2)).toEqual(['spec', 'requestLogs']);
  });

  it('gives snapshots of an operator that predates requestLogs the same defaults', () => {
    const { snapshot } = compile(baseFixture());
    const { requestLogs: _dropped, ...old } = snapshot.projects['acme.shop'] ?? {};
    expect(snapshotProject.parse(old).requestLogs).toEqual({ bodies: false, maxEntries: 100_000 });
  });

  it('carries every webhook event type of the contract into the snapshot', () => {
    const f = baseFixture();
    const hook = get(f, 'Project', 'shop').spec?.webhooks?.[0];
    if (!hook) throw new Error('webhook missing');
    hook.events = [...WEBHOOK_EVENT_TYPES];
    const { snapshot } = compile(f);
    expect(snapshot.projects['acme.shop']?.webhooks[0]?.events).toEqual([...WEBHOOK_EVENT_TYPES]);
    expect(snapshotSchema.safeParse(snapshot).success).toBe(true);
  });

  it('a project without workflows, keys or caps still gets an (empty) entry', () => {
    const f = baseFixture();
    secondProject(f);
    const { snapshot } = compile(f);
    expect(Object.keys(snapshot.projects).sort()).toEqual(['acme.blog', 'acme.shop']);
    expect(snapshot.projects['acme.blog']?.workflows).toEqual({});
    expect(snapshot.projects['acme.blog']?.spendCaps).toEqual([]);
  });
});

describe('snapshot version', () => {
  const versionOf = (f: Fixture, now: Date = NOW) => compile(f, now).snapshot.version;
  const base = versionOf(baseFixture());

  it('is a stable content hash', () => {
    expect(base).toMatch(/^[0-9a-f]{16,64}$/);
    expect(versionOf(baseFixture())).toBe(base);
    // generatedAt is not part of the content.
    expect(versionOf(baseFixture(), new Date('2025-06-01T12:30:00Z'))).toBe(base);
  });

  it('does not depend on the order of objects and Secrets', () => {
    const f = baseFixture();
    f.objects.reverse();
    f.secrets.reverse();
    expect(versionOf(f)).toBe(base);
    const g = baseFixture();
    g.objects = [...g.objects.slice(3), ...g.objects.slice(0, 3)];
    expect(versionOf(g)).toBe(base);
  });

  it('does not depend on the order of objects when some of them are refused', () => {
    const dup = (f: Fixture) => laterWorkflow('support-v2', 'support', '2025-02-01T00:00:00Z')(f);
    const f = baseFixture();
    dup(f);
    const g = baseFixture();
    dup(g);
    g.objects.reverse();
    expect(versionOf(g)).toBe(versionOf(f));
  });

  it('does not change when a sealed secret keeps its value', () => {
    const f = baseFixture();
    secretOf(f, 'openai-creds').data['apiKey'] = `  ${OPENAI_KEY}\n`;
    expect(versionOf(f)).toBe(base);
  });

  const changes: { field: string; mutate: (f: Fixture) => void }[] = [
    {
      field: 'Project spec.displayName',
      mutate: (f) => void Object.assign(get(f, 'Project', 'shop').spec ?? {}, { displayName: 'Shop 2' }),
    },
    {
      field: 'Project spec.compatibleApi.enabled',
      mutate: (f) =>
        void Object.assign(get(f, 'Project', 'shop').spec ?? {}, { compatibleApi: { enabled: false } }),
    },
    {
      field: 'Project spec.rateLimit',
      mutate: (f) =>
        void Object.assign(get(f, 'Project', 'shop').spec ?? {}, { rateLimit: { requestsPerMinute: 101 } }),
    },
    {
      field: 'Project spec.outboundFetch',
      mutate: (f) =>
        void Object.assign(get(f, 'Project', 'shop').spec ?? {}, {
          outboundFetch: { allowPrivateNetworks: true },
        }),
    },
    {
      field: 'Project spec.requestLogs.bodies',
      mutate: (f) =>
        void Object.assign(get(f, 'Project', 'shop').spec ?? {}, { requestLogs: { bodies: true } }),
    },
    {
      field: 'Project spec.requestLogs.maxEntries',
      mutate: (f) =>
        void Object.assign(get(f, 'Project', 'shop').spec ?? {}, { requestLogs: { maxEntries: 2_000 } }),
    },
    {
      field: 'Project spec.webhooks[0].events',
      mutate: (f) => {
        const hook = get(f, 'Project', 'shop').spec?.webhooks?.[0];
        if (hook) hook.events = ['ai.error'];
      },
    },
    {
      field: 'Provider spec.type',
      mutate: (f) => void Object.assign(get(f, 'Provider', 'openai').spec, { type: 'gemini' }),
    },
    {
      field: 'Provider spec.baseURL',
      mutate: (f) =>
        void Object.assign(get(f, 'Provider', 'openai').spec, { baseURL: 'https://proxy.example.com/v1' }),
    },
    {
      field: 'Provider spec.apiVersion',
      mutate: (f) => void Object.assign(get(f, 'Provider', 'openai').spec, { apiVersion: '2024-10-21' }),
    },
    {
      field: 'Provider spec.streaming',
      mutate: (f) => void Object.assign(get(f, 'Provider', 'openai').spec, { streaming: false }),
    },
    {
      field: 'Provider spec.timeouts',
      mutate: (f) =>
        void Object.assign(get(f, 'Provider', 'openai').spec, {
          timeouts: { connectMs: 1000, firstByteMs: 60000, totalMs: 300000 },
        }),
    },
    {
      field: 'Provider spec.models[].pricing',
      mutate: (f) => {
        const m = get(f, 'Provider', 'openai').spec.models[0];
        if (m) m.pricing = { inputUsdPerMTok: '0.16' };
      },
    },
    {
      field: 'Provider spec.models[].requestTypes',
      mutate: (f) => {
        const m = get(f, 'Provider', 'anthropic').spec.models[0];
        if (m) m.requestTypes = ['chat', 'vision'];
      },
    },
    {
      field: 'Provider spec.credentials (other Secret, other value)',
      mutate: (f) => {
        f.secrets.push({ namespace: NS, name: 'openai-creds-2', data: { apiKey: 'sk-openai-rotated' } });
        get(f, 'Provider', 'openai').spec.credentials = { secretRef: { name: 'openai-creds-2' } };
      },
    },
    {
      field: 'Workflow spec.name',
      mutate: (f) => void Object.assign(get(f, 'Workflow', 'support').spec, { name: 'help' }),
    },
    {
      field: 'Workflow spec.description',
      mutate: (f) => void Object.assign(get(f, 'Workflow', 'support').spec, { description: 'd' }),
    },
    {
      field: 'Workflow spec.requestType',
      mutate: (f) => void Object.assign(get(f, 'Workflow', 'support').spec, { requestType: 'vision' }),
    },
    {
      field: 'Workflow spec.provider/model',
      mutate: (f) =>
        void Object.assign(get(f, 'Workflow', 'support').spec, {
          provider: 'anthropic',
          model: 'claude-haiku-4-5',
        }),
    },
    {
      field: 'Workflow spec.backups',
      mutate: (f) => void Object.assign(get(f, 'Workflow', 'support').spec, { backups: [] }),
    },
    {
      field: 'Workflow spec.systemInstructions',
      mutate: (f) =>
        void Object.assign(get(f, 'Workflow', 'support').spec, { systemInstructions: 'Be kind.' }),
    },
    {
      field: 'Workflow spec.structuredOutput',
      mutate: (f) =>
        void Object.assign(get(f, 'Workflow', 'support').spec, {
          structuredOutput: { schema: { type: 'object' } },
        }),
    },
    {
      field: 'Workflow spec.cacheFields',
      mutate: (f) =>
        void Object.assign(get(f, 'Workflow', 'support').spec, { cacheFields: ['metadata.customer_id'] }),
    },
    {
      field: 'Workflow spec.sessionMemory',
      mutate: (f) =>
        void Object.assign(get(f, 'Workflow', 'support').spec, { sessionMemory: { enabled: true } }),
    },
    {
      field: 'Workflow spec.hostedTools',
      mutate: (f) =>
        void Object.assign(get(f, 'Workflow', 'support').spec, { hostedTools: { default: 'omit' } }),
    },
    {
      field: 'Workflow spec.eventName',
      mutate: (f) => void Object.assign(get(f, 'Workflow', 'support').spec, { eventName: 'support.done' }),
    },
    {
      field: 'Workflow spec.responseCache',
      mutate: (f) =>
        void Object.assign(get(f, 'Workflow', 'support').spec, { responseCache: { ttlSeconds: 60 } }),
    },
    {
      field: 'Workflow spec.testMode',
      mutate: (f) => void Object.assign(get(f, 'Workflow', 'support').spec, { testMode: true }),
    },
    {
      field: 'ApiKey spec.scopes',
      mutate: (f) => void Object.assign(get(f, 'ApiKey', 'backend').spec, { scopes: ['ai', 'console'] }),
    },
    {
      field: 'ApiKey spec.expiresAt',
      mutate: (f) =>
        void Object.assign(get(f, 'ApiKey', 'backend').spec, { expiresAt: '2026-01-01T00:00:00Z' }),
    },
    {
      field: 'ApiKey spec.revoked',
      mutate: (f) => void Object.assign(get(f, 'ApiKey', 'backend').spec, { revoked: true }),
    },
    {
      field: 'ApiKey spec.rateLimit',
      mutate: (f) =>
        void Object.assign(get(f, 'ApiKey', 'backend').spec, { rateLimit: { tokensPerMinute: 1000 } }),
    },
    {
      field: 'ApiKey spec.secretRef (other key)',
      mutate: (f) => {
        f.secrets.push({ namespace: NS, name: 'shop-key-2', data: { apiKey: API_KEY_2 } });
        get(f, 'ApiKey', 'backend').spec.secretRef = { name: 'shop-key-2' };
      },
    },
    {
      field: 'SpendCap spec.period',
      mutate: (f) => void Object.assign(get(f, 'SpendCap', 'monthly').spec, { period: 'weekly' }),
    },
    {
      field: 'SpendCap spec.limitUsd',
      mutate: (f) => void Object.assign(get(f, 'SpendCap', 'monthly').spec, { limitUsd: '50.01' }),
    },
    {
      field: 'SpendCap spec.slot',
      mutate: (f) => void Object.assign(get(f, 'SpendCap', 'support-primary').spec, { slot: 'backup-1' }),
    },
    {
      field: 'SpendCap spec.workflowRef',
      mutate: (f) =>
        void Object.assign(get(f, 'SpendCap', 'support-primary').spec, { workflowRef: { name: 'embed' } }),
    },
    {
      field: 'Secret value of a provider',
      mutate: (f) => void Object.assign(secretOf(f, 'openai-creds').data, { apiKey: 'sk-new' }),
    },
    {
      field: 'Secret value of a webhook',
      mutate: (f) => void Object.assign(secretOf(f, 'hook-secret').data, { secret: 'whsec_new' }),
    },
    {
      field: 'Workflow creationTimestamp (createdAt)',
      mutate: (f) => {
        get(f, 'Workflow', 'embed').metadata.creationTimestamp = '2025-01-02T00:00:00Z';
      },
    },
  ];

  it.each(changes)('changes with $field', ({ mutate }) => {
    const f = baseFixture();
    mutate(f);
    expect(versionOf(f)).not.toBe(base);
  });

  it('is computed by the pure compiler: the same parsed input compiles to the same snapshot', () => {
    const objects = parseAll(baseFixture());
    const input = { objects, secrets: baseFixture().secrets, now: NOW, sealKey: SEAL_KEY };
    expect(compileSnapshot(input)).toEqual(compileSnapshot(input));
  });
});
