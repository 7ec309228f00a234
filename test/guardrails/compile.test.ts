import { describe, expect, it } from 'vitest';
import { type GuardrailRule, type SnapshotGuardrail, unseal } from '#contract';
import { resolveRules } from '#gateway/guardrails/resolve';
import { guardrailSecretContext } from '#operator/compiler/guardrails';
import { switchyardObject } from '#operator/resources/index';
import { baseFixture, compile, type Fixture, type Manifest, NS, SEAL_KEY } from '../compiler/fixtures.ts';

/**
 * The Guardrail resource through the operator's compiler: into the snapshot under its project,
 * attachments resolved, user patterns checked as RE2 when applied (CEL cannot run RE2), webhook
 * secrets sealed, enforced rules kept on below the project and reported when someone tries.
 */

const PROJECT_ID = `${NS}.shop`;
const HOOK_SECRET = 'whsec_R3VhcmRyYWlsV2ViaG9va1NlY3JldDAxMjM0NQ==';

const guard = (name: string, spec: Record<string, unknown>): Manifest =>
  ({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Guardrail',
    metadata: { name, namespace: NS, creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: { projectRef: { name: 'shop' }, ...spec },
  }) as Manifest;

function withGuards(...guards: Manifest[]): Fixture {
  const f = baseFixture();
  f.objects.push(...guards);
  f.secrets.push({ namespace: NS, name: 'gr-hook', data: { secret: HOOK_SECRET } });
  return f;
}

const verdictOf = (out: ReturnType<typeof compile>, name: string) =>
  out.verdicts.find((v) => v.ref.kind === 'Guardrail' && v.ref.name === name);

describe('Guardrail compilation', () => {
  it('puts a project-wide guardrail into its project with the CRD defaults written out', () => {
    const out = compile(
      withGuards(
        guard('pii', {
          rules: [
            { name: 'cards', type: 'card', mode: 'redact', enforced: true },
            { name: 'mail', type: 'email', mode: 'monitor', direction: 'output' },
            {
              name: 'tickets',
              type: 'pattern',
              mode: 'block',
              pattern: 'TICKET-[0-9]{4,8}',
              label: 'TICKET',
            },
          ],
          allow: ['help@shop.example'],
        }),
      ),
    );
    expect(verdictOf(out, 'pii')).toMatchObject({ ok: true, details: { rules: 3 } });
    const g = out.snapshot.projects[PROJECT_ID]?.guardrails.pii;
    expect(g).toEqual({
      name: 'pii',
      source: `${NS}/pii`,
      attach: { scope: 'project' },
      rules: [
        { name: 'cards', detector: { type: 'card' }, mode: 'redact', direction: 'both', enforced: true },
        { name: 'mail', detector: { type: 'email' }, mode: 'monitor', direction: 'output', enforced: false },
        {
          name: 'tickets',
          detector: {
            type: 'pattern',
            label: 'TICKET',
            pattern: 'TICKET-[0-9]{4,8}',
            caseInsensitive: false,
          },
          mode: 'block',
          direction: 'both',
          enforced: false,
        },
      ],
      allow: ['help@shop.example'],
      disable: [],
    });
  });

  it.each([
    ['a catastrophic-backtracking pattern', '(a+)+$'],
    ['a lookahead RE2 cannot run', '(?=secret)[a-z]{1,10}'],
    ['a backreference', '([a-z]{1,5})\\1'],
  ])('refuses %s at apply time and leaves the whole Guardrail out', (_what, pattern) => {
    const out = compile(
      withGuards(
        guard('bad', {
          rules: [
            { name: 'cards', type: 'card', mode: 'redact' },
            { name: 'mine', type: 'pattern', mode: 'block', pattern, label: 'MINE' },
          ],
        }),
      ),
    );
    const v = verdictOf(out, 'bad');
    expect(v).toMatchObject({ ok: false, reason: 'InvalidPattern' });
    expect(v?.message).toMatch(/^rule mine: .+; the Guardrail is left out$/);
    expect(out.snapshot.projects[PROJECT_ID]?.guardrails).toEqual({});
    // Everything else still serves.
    expect(Object.keys(out.snapshot.projects[PROJECT_ID]?.workflows ?? {})).toContain('support');
  });

  it('resolves workflow and key attachments; an unknown one leaves the Guardrail out', () => {
    const out = compile(
      withGuards(
        guard('wf', {
          scope: 'workflows',
          workflowRefs: [{ name: 'support' }],
          rules: [{ name: 'c', type: 'card', mode: 'block' }],
        }),
        guard('key', {
          scope: 'keys',
          apiKeyRefs: [{ name: 'backend' }],
          rules: [{ name: 'c', type: 'card', mode: 'block' }],
        }),
        guard('lost', {
          scope: 'workflows',
          workflowRefs: [{ name: 'nope' }],
          rules: [{ name: 'c', type: 'card', mode: 'block' }],
        }),
        guard('nokey', {
          scope: 'keys',
          apiKeyRefs: [{ name: 'nope' }],
          rules: [{ name: 'c', type: 'card', mode: 'block' }],
        }),
      ),
    );
    const gs = out.snapshot.projects[PROJECT_ID]?.guardrails ?? {};
    expect(gs.wf?.attach).toEqual({ scope: 'workflows', workflows: ['support'] });
    expect(gs.key?.attach).toEqual({ scope: 'keys', keyIds: [`${NS}/backend`] });
    expect(verdictOf(out, 'lost')).toMatchObject({ ok: false, reason: 'WorkflowNotFound' });
    expect(verdictOf(out, 'nokey')).toMatchObject({ ok: false, reason: 'ApiKeyNotFound' });
    expect(Object.keys(gs).sort()).toEqual(['key', 'wf']);
  });

  it('refuses enforced rules below the project scope, and rules missing what their type needs', () => {
    const enforcedBelow = switchyardObject.safeParse(
      guard('x', {
        scope: 'workflows',
        workflowRefs: [{ name: 'support' }],
        rules: [{ name: 'c', type: 'card', mode: 'block', enforced: true }],
      }),
    );
    expect(enforcedBelow.success).toBe(false);
    expect(JSON.stringify(enforcedBelow.error?.issues)).toContain(
      'enforced rules are only allowed on a project-scope Guardrail',
    );
    const noPattern = switchyardObject.safeParse(
      guard('y', { rules: [{ name: 'p', type: 'pattern', mode: 'block' }] }),
    );
    expect(JSON.stringify(noPattern.error?.issues)).toContain('a pattern rule needs pattern and label');
    const twice = switchyardObject.safeParse(
      guard('z', {
        rules: [
          { name: 'c', type: 'card', mode: 'block' },
          { name: 'c', type: 'email', mode: 'block' },
        ],
      }),
    );
    expect(JSON.stringify(twice.error?.issues)).toContain('duplicate rule name c');
  });

  it('reports a disable of an enforced (or unknown) rule in status; the rule stays on', () => {
    const out = compile(
      withGuards(
        guard('base', {
          rules: [
            { name: 'cards', type: 'card', mode: 'block', enforced: true },
            { name: 'mail', type: 'email', mode: 'redact' },
          ],
        }),
        guard('relaxed', {
          scope: 'workflows',
          workflowRefs: [{ name: 'support' }],
          rules: [
            { name: 'tickets', type: 'pattern', mode: 'monitor', pattern: 'T-[0-9]{3}', label: 'TICKET' },
          ],
          disable: ['base/cards', 'base/mail', 'base/nothing'],
        }),
      ),
    );
    const v = verdictOf(out, 'relaxed');
    expect(v).toMatchObject({ ok: true });
    expect(v?.details.ignoredDisables).toBe(
      'base/cards (enforced at the project); base/nothing (no such rule in the project)',
    );
    expect(v?.message).toContain('disable has no effect on base/cards (enforced at the project)');
  });

  it('seals a webhook rule secret; the plaintext is nowhere in the snapshot', () => {
    const out = compile(
      withGuards(
        guard('ext', {
          rules: [
            {
              name: 'check',
              type: 'webhook',
              mode: 'block',
              url: 'https://checks.example.com/v1',
              secretRef: { name: 'gr-hook' },
              timeoutMs: 800,
            },
          ],
        }),
      ),
    );
    const rule = out.snapshot.projects[PROJECT_ID]?.guardrails.ext?.rules[0];
    expect(rule?.detector).toMatchObject({
      type: 'webhook',
      url: 'https://checks.example.com/v1',
      timeoutMs: 800,
    });
    expect(JSON.stringify(out.snapshot)).not.toContain(HOOK_SECRET);
    const sealed = rule?.detector.type === 'webhook' ? rule.detector.secret : undefined;
    expect(sealed && unseal(SEAL_KEY, guardrailSecretContext(PROJECT_ID, 'ext', 'check'), sealed)).toBe(
      HOOK_SECRET,
    );
    const missing = compile(
      withGuards(
        guard('ext2', {
          rules: [
            {
              name: 'check',
              type: 'webhook',
              mode: 'block',
              url: 'https://x.example',
              secretRef: { name: 'none' },
            },
          ],
        }),
      ),
    );
    expect(verdictOf(missing, 'ext2')).toMatchObject({ ok: false, reason: 'SecretMissing' });
  });
});

describe('scope resolution: project → workflow → key', () => {
  const rule = (name: string, mode: GuardrailRule['mode'], enforced = false): GuardrailRule => ({
    name,
    detector: { type: 'card' },
    mode,
    direction: 'both',
    enforced,
  });
  const g = (
    name: string,
    attach: SnapshotGuardrail['attach'],
    rules: GuardrailRule[],
    disable: string[] = [],
  ): SnapshotGuardrail => ({
    name,
    source: `${NS}/${name}`,
    attach,
    rules,
    allow: [],
    disable,
  });
  const all = {
    base: g('base', { scope: 'project' }, [rule('locked', 'block', true), rule('soft', 'redact')]),
    wf: g(
      'wf',
      { scope: 'workflows', workflows: ['support'] },
      [rule('wf-mon', 'monitor')],
      ['base/soft', 'base/locked'],
    ),
    key: g('key', { scope: 'keys', keyIds: [`${NS}/backend`] }, [rule('key-block', 'block')], ['wf/wf-mon']),
    peer: g('peer', { scope: 'project' }, [rule('p', 'redact')], ['base/soft']),
  };
  const names = (workflow: string | null, key: string | undefined) =>
    resolveRules(all, workflow, key).rules.map((r) => `${r.guardrail.name}/${r.rule.name}`);

  it('combines every level; a narrower Guardrail switches off a wider rule, never an enforced one', () => {
    // Project level only: a project-scope peer cannot switch off another project-scope rule.
    expect(names('other', undefined)).toEqual(['base/locked', 'base/soft', 'peer/p']);
    // The workflow switches off base/soft; base/locked is enforced and stays.
    expect(names('support', undefined)).toEqual(['base/locked', 'peer/p', 'wf/wf-mon']);
    // The key's Guardrail adds a block rule and switches off the workflow's monitor rule.
    expect(names('support', `${NS}/backend`)).toEqual(['base/locked', 'peer/p', 'key/key-block']);
    // Another key: the key-scope Guardrail does not apply.
    expect(names('support', `${NS}/other`)).toEqual(['base/locked', 'peer/p', 'wf/wf-mon']);
  });
});
