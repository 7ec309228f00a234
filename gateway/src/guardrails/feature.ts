import type { Registry } from 'prom-client';
import type { Feature, FeatureRun } from '../pipeline/feature.ts';
import type { CanonicalRequest } from '../providers/types.ts';
import { type CallWebhook, localEdit, type OnFinding, webhookPass } from './check.ts';
import { guardrailMetrics } from './metrics.ts';
import { type GuardrailNote, newNote } from './note.ts';
import { rulesFor } from './resolve.ts';
import { guardStream } from './stream.ts';
import { holdForWebhooks } from './stream-webhook.ts';
import { editRequest, editResult } from './texts.ts';
import { maskRequest } from './values.ts';
import { callWebhook } from './webhook.ts';

export interface GuardrailsDeps {
  registry: Registry;
  now: () => number;
  /** Replaces the webhook call (tests of the pipeline without a receiver). */
  callWebhook?: CallWebhook;
}

/**
 * Guardrails, as the first feature of the pipeline: the prompt is checked (every text of the
 * canonical request) before any other feature sees it, so limits, the cache key and entry, session
 * memory, stored responses, request logs and traces only ever hold what the rules let through.
 * The answer is checked (`review`, `reviewStream`) before any feature keeps it or the client gets
 * it. A block refuses with `guardrail_blocked`; redact masks; monitor records.
 */
export function guardrails(deps: GuardrailsDeps): Feature {
  const metrics = guardrailMetrics(deps.registry);
  return {
    name: 'guardrails',
    begin({ ex, p }): Promise<FeatureRun> | FeatureRun | undefined {
      const rules = rulesFor(ex.auth.project, p.workflowName, ex.auth.key.keyId);
      if (!rules) return undefined;
      const project = ex.auth.project.config;
      const note: GuardrailNote = newNote();
      const on: OnFinding = (f) =>
        metrics.findings.inc({ rule: f.rule, mode: f.mode, direction: f.direction });
      let counted = 0;
      const countFailures = () => {
        for (const f of note.failures.slice(counted))
          metrics.checkFailures.inc({ rule: f.rule, outcome: f.outcome });
        counted = note.failures.length;
      };
      const metadata = {
        project: project.id,
        workflow: p.workflowName,
        key_id: ex.auth.key.keyId,
        request_log_id: ex.id,
      };
      const secrets = ex.auth.project.guardrailSecrets;
      const call: CallWebhook =
        deps.callWebhook ??
        ((rule, direction, text, md) =>
          callWebhook(rule, direction, text, md, {
            secrets: secrets?.get(rule.rule),
            allowPrivateNetworks: project.allowPrivateNetworks,
            now: deps.now,
          }));
      // The client's own provider body would carry the original text past the rules: the adapter
      // translates the checked canonical request instead (and the answer comes back canonical).
      let request: CanonicalRequest = p.request;
      if (request.kind === 'chat' && request.native) {
        const { native: _native, ...rest } = request;
        request = rest;
      }
      const unchecked = request;
      // A blocked request is logged with the finding that blocked it, although it never began.
      const refuse = (err: unknown): never => {
        countFailures();
        note.refusedRequest = maskRequest(rules, unchecked);
        ex.progress.notes.guardrails = note;
        throw err;
      };
      try {
        if (rules.input) request = editRequest(request, localEdit(rules, 'input', note, on));
      } catch (err) {
        refuse(err);
      }
      const outputHooks = rules.webhooks.some((w) => w.direction !== 'input');
      const run = (checked: CanonicalRequest): FeatureRun => ({
        notes: { guardrails: note },
        request: checked,
        review: rules.output
          ? async (result) => {
              try {
                const out = editResult(result, localEdit(rules, 'output', note, on));
                if (!rules.webhooks.length) return out;
                return await webhookPass(
                  rules,
                  'output',
                  (e) => editResult(out, e),
                  call,
                  metadata,
                  note,
                  on,
                );
              } finally {
                countFailures();
              }
            }
          : undefined,
        reviewStream: rules.output
          ? (opened) => {
              const local = guardStream(rules, note, on, opened);
              return outputHooks
                ? holdForWebhooks(rules, note, on, call, metadata, local, countFailures)
                : local;
            }
          : undefined,
        finish: (end) => {
          // Refused by a later feature (a rate limit, an unknown session): the request log keeps
          // the checked request, not the body as sent.
          if (end.kind === 'refused') {
            note.refusedRequest ??= checked;
            ex.progress.notes.guardrails ??= note;
          }
          return undefined;
        },
      });
      if (!rules.input || !rules.webhooks.length) return run(request);
      const local = request;
      return webhookPass(rules, 'input', (e) => editRequest(local, e), call, metadata, note, on).then(
        (checked) => {
          countFailures();
          return run(checked);
        },
        refuse,
      );
    },
  };
}
