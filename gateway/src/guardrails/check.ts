import { GuardrailBlocked } from '../errors/index.ts';
import { type Finding, redact } from './detect/index.ts';
import { firedList, type GuardrailNote, type RecordedFinding } from './note.ts';
import type { Direction, ResolvedRules, WebhookRule } from './resolve.ts';
import type { Edit } from './texts.ts';
import {
  applyRedactions,
  type WebhookMetadata,
  type WebhookOutcome,
  type WebhookVerdict,
} from './webhook.ts';

export type OnFinding = (f: RecordedFinding) => void;

/**
 * The local detectors over one text: findings recorded, a block thrown (a block anywhere wins),
 * redact-mode findings masked. Returns its argument when nothing is redacted.
 */
export function localEdit(
  rules: ResolvedRules,
  direction: Direction,
  note: GuardrailNote,
  on: OnFinding,
): Edit {
  return (text) => {
    if (text.length === 0) return text;
    const found = rules.compiled.scan(text, direction);
    if (found.length === 0) return text;
    return applyFindings(rules, direction, note, on, text, found);
  };
}

export function applyFindings(
  rules: ResolvedRules,
  direction: Direction,
  note: GuardrailNote,
  on: OnFinding,
  text: string,
  found: readonly Finding[],
): string {
  let block: Finding | undefined;
  const masked: Finding[] = [];
  for (const f of found) {
    const mode = rules.modes.get(f.rule) ?? 'monitor';
    const rec: RecordedFinding = { rule: f.rule, label: f.label, mode, direction, hash: f.hash };
    note.findings.push(rec);
    on(rec);
    if (mode === 'block') block ??= f;
    else if (mode === 'redact') masked.push(f);
  }
  if (block) throw blocked(block.rule, block.label, direction, note);
  return masked.length ? redact(text, masked) : text;
}

export function blocked(
  rule: string,
  label: string,
  direction: Direction,
  note: GuardrailNote,
  checkFailed = false,
): GuardrailBlocked {
  return new GuardrailBlocked(rule, label, direction, {
    checkFailed,
    headers: { 'x-service-guardrails': firedList(note) },
  });
}

export type CallWebhook = (
  rule: WebhookRule,
  direction: Direction,
  text: string,
  metadata: WebhookMetadata,
) => Promise<WebhookOutcome>;

/**
 * The webhook rules over the texts `walk` visits (after the local redactions, so a receiver never
 * sees what a local rule masked): one call per rule and text, all at once; then `walk` again with
 * the verdicts' redactions applied.
 */
export async function webhookPass<T>(
  rules: ResolvedRules,
  direction: Direction,
  walk: (edit: Edit) => T,
  call: CallWebhook,
  metadata: WebhookMetadata,
  note: GuardrailNote,
  on: OnFinding,
): Promise<T> {
  const hooks = rules.webhooks.filter((w) => w.direction === 'both' || w.direction === direction);
  const texts: string[] = [];
  const first = walk((t) => {
    if (t.length > 0) texts.push(t);
    return t;
  });
  if (hooks.length === 0 || texts.length === 0) return first;
  const unique = [...new Set(texts)];
  const verdicts = await Promise.all(
    hooks.map(async (hook) => ({
      hook,
      outcomes: await Promise.all(unique.map((t) => call(hook, direction, t, metadata))),
    })),
  );
  // Every hook's spans are offsets into the same text: gathered, then masked together.
  const spans = new Map<string, NonNullable<WebhookVerdict['redactions']>>();
  for (const { hook, outcomes } of verdicts) {
    outcomes.forEach((o, i) => {
      const text = unique[i]!;
      if (!o.ok) {
        note.failures.push({
          rule: hook.rule,
          direction,
          outcome: hook.failClosed ? 'failed-closed' : 'failed-open',
          why: o.why,
        });
        if (hook.failClosed) throw blocked(hook.rule, 'an unchecked value', direction, note, true);
        return;
      }
      if (o.verdict.action === 'allow') return;
      const rec: RecordedFinding = {
        rule: hook.rule,
        label: o.verdict.redactions?.[0]?.label ?? 'WEBHOOK',
        mode: hook.mode,
        direction,
        hash: '',
      };
      note.findings.push(rec);
      on(rec);
      // The rule's mode decides, as for local rules: a monitor rule only records its verdict.
      if (hook.mode === 'block' || (o.verdict.action === 'block' && hook.mode !== 'monitor'))
        throw blocked(hook.rule, 'content its check refused', direction, note);
      if (hook.mode === 'redact' && o.verdict.action === 'redact') {
        const kept = (o.verdict.redactions ?? []).filter(
          (r) => !hook.allow.includes(text.slice(r.start, r.end)),
        );
        spans.set(text, [...(spans.get(text) ?? []), ...kept]);
      }
    });
  }
  if (spans.size === 0) return first;
  const edits = new Map(
    [...spans].map(([t, redactions]) => [t, applyRedactions(t, { action: 'redact', redactions }, [])]),
  );
  return walk((t) => edits.get(t) ?? t);
}
