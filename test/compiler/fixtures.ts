import type { z } from 'zod';
import type { Snapshot } from '#contract';
import { type CompileOutput, compileSnapshot } from '#operator/compiler/index';
import { type SwitchyardKind, type SwitchyardObject, switchyardObject } from '#operator/resources/index';
import type { SecretData } from '#operator/resources/secret';

/** An object as written in YAML (defaults not applied yet). */
export type Manifest = z.input<typeof switchyardObject>;
export type ManifestOf<K extends SwitchyardKind> = Extract<Manifest, { kind: K }>;

export interface Fixture {
  objects: Manifest[];
  secrets: SecretData[];
}

export const NS = 'acme';
export const NOW = new Date('2025-06-01T12:00:00.000Z');
export const SEAL_KEY = Buffer.alloc(32, 7);
export const OTHER_SEAL_KEY = Buffer.alloc(32, 8);
export const BASE_CREATED = '2025-01-01T00:00:00Z';

/** Plaintext secrets of the base set: none of them may ever show up in a snapshot. */
export const OPENAI_KEY = 'sk-openai-PLAINTEXT-provider-key-0001';
export const ANTHROPIC_KEY = 'sk-ant-PLAINTEXT-provider-key-0002';
export const WEBHOOK_SECRET = 'whsec_PLAINTEXT_webhook_secret_0003';
export const API_KEY = 'sy_live_AAAAbbbbCCCCddddEEEEffff0001';
export const API_KEY_2 = 'sy_live_AAAAbbbbCCCCddddEEEEffff0002';
export const PREVIOUS_API_KEY = 'sy_live_PREVIOUSpreviousPREVIOUS0000';

const meta = (name: string, created = BASE_CREATED) => ({ name, namespace: NS, creationTimestamp: created });

/**
 * The base valid set: one project with a webhook, two providers, a chat workflow with one backup,
 * an embedding workflow, one API key and two spend caps. Every object in it is Ready.
 */
export function baseFixture(): Fixture {
  return {
    secrets: [
      { namespace: NS, name: 'openai-creds', data: { apiKey: OPENAI_KEY } },
      { namespace: NS, name: 'anthropic-creds', data: { apiKey: ANTHROPIC_KEY } },
      { namespace: NS, name: 'hook-secret', data: { secret: WEBHOOK_SECRET } },
      { namespace: NS, name: 'shop-key', data: { apiKey: API_KEY } },
    ],
    objects: [
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Project',
        metadata: meta('shop'),
        spec: {
          displayName: 'Shop',
          rateLimit: { requestsPerMinute: 100 },
          webhooks: [{ url: 'https://hooks.example.com/shop', secretRef: { name: 'hook-secret' } }],
        },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Provider',
        metadata: meta('openai'),
        spec: {
          type: 'openai',
          credentials: { secretRef: { name: 'openai-creds' } },
          models: [
            {
              name: 'gpt-4o-mini',
              requestTypes: ['chat', 'completion', 'vision'],
              pricing: { inputUsdPerMTok: '0.15' },
            },
            { name: 'text-embedding-3-small', requestTypes: ['embedding'] },
          ],
        },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Provider',
        metadata: meta('anthropic'),
        spec: {
          type: 'anthropic',
          credentials: { secretRef: { name: 'anthropic-creds', key: 'apiKey' } },
          models: [{ name: 'claude-haiku-4-5', requestTypes: ['chat'] }],
        },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Workflow',
        metadata: meta('support'),
        spec: {
          projectRef: { name: 'shop' },
          requestType: 'chat',
          provider: 'openai',
          model: 'gpt-4o-mini',
          backups: [{ provider: 'anthropic', model: 'claude-haiku-4-5' }],
          systemInstructions: 'Be brief.',
        },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Workflow',
        metadata: meta('embed'),
        spec: {
          projectRef: { name: 'shop' },
          requestType: 'embedding',
          provider: 'openai',
          model: 'text-embedding-3-small',
        },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'ApiKey',
        metadata: meta('backend'),
        spec: { projectRef: { name: 'shop' }, scopes: ['ai'], secretRef: { name: 'shop-key' } },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'SpendCap',
        metadata: meta('monthly'),
        spec: { projectRef: { name: 'shop' }, scope: 'project', period: 'monthly', limitUsd: '50.00' },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'SpendCap',
        metadata: meta('support-primary'),
        spec: {
          projectRef: { name: 'shop' },
          scope: 'workflow',
          workflowRef: { name: 'support' },
          slot: 'primary',
          period: 'daily',
          limitUsd: '5',
        },
      },
    ],
  };
}

/** The manifest of one object of the fixture, typed by kind, for mutations. */
export function get<K extends SwitchyardKind>(f: Fixture, kind: K, name: string): ManifestOf<K> {
  const found = f.objects.find((o): o is ManifestOf<K> => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`fixture has no ${kind} ${name}`);
  return found;
}

export function secretOf(f: Fixture, name: string): SecretData {
  const found = f.secrets.find((s) => s.name === name);
  if (!found) throw new Error(`fixture has no Secret ${name}`);
  return found;
}

export function remove(f: Fixture, kind: SwitchyardKind | 'Secret', name: string): void {
  if (kind === 'Secret') f.secrets = f.secrets.filter((s) => s.name !== name);
  else f.objects = f.objects.filter((o) => !(o.kind === kind && o.metadata.name === name));
}

export const parseAll = (f: Fixture): SwitchyardObject[] => f.objects.map((o) => switchyardObject.parse(o));

export function compile(f: Fixture, now: Date = NOW, sealKey: Buffer = SEAL_KEY): CompileOutput {
  return compileSnapshot({ objects: parseAll(f), secrets: f.secrets, now, sealKey });
}

/** Whether the object shows up anywhere in the snapshot. */
export function inSnapshot(s: Snapshot, kind: SwitchyardKind, name: string, ns: string = NS): boolean {
  const projects = Object.values(s.projects);
  switch (kind) {
    case 'Project':
      return s.projects[`${ns}.${name}`] !== undefined;
    case 'Provider':
      return projects.some((p) => p.id.startsWith(`${ns}.`) && p.providers[name] !== undefined);
    case 'Workflow':
      return projects.some((p) => Object.values(p.workflows).some((w) => w.source === `${ns}/${name}`));
    case 'ApiKey':
      return Object.values(s.apiKeys).some((k) => k.keyId === `${ns}/${name}`);
    case 'SpendCap':
      return projects.some((p) => p.spendCaps.some((c) => c.id === `${ns}/${name}`));
    case 'Guardrail':
      return projects.some((p) => p.id.startsWith(`${ns}.`) && p.guardrails[name] !== undefined);
    case 'MCPServer':
      return projects.some((p) => Object.values(p.mcpServers).some((m) => m.source === `${ns}/${name}`));
  }
}
