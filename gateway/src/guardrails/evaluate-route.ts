import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../errors/index.ts';
import { authOf } from '../http/context.ts';
import { parseBody } from '../requests/zod-error.ts';
import { redact } from './detect/index.ts';
import { rulesFor } from './resolve.ts';

/** The longest text a dry run takes (1 MiB of UTF-16 code units): about a long prompt. */
const MAX_TEXT = 1_048_576;

export const evaluateBody = z.strictObject({
  workflow: z.string().min(1).max(256),
  text: z.string().max(MAX_TEXT),
  direction: z.enum(['input', 'output']).default('input'),
});

/**
 * POST /v1/guardrails/evaluate: a dry run of the rules a request with this key to this workflow
 * would run, on one text, with the key's normal authentication. Nothing is sent to a provider,
 * counted or logged beyond the request itself; the findings carry offsets into the text the
 * caller sent (never the values), and the text as `redact` rules would leave it. Webhook rules are
 * named but not called (a dry run must not reach a third party).
 */
export function evaluateRoute(app: FastifyInstance): void {
  app.post('/guardrails/evaluate', { config: { scope: 'ai' }, bodyLimit: 4 * MAX_TEXT }, async (req) => {
    const auth = authOf(req);
    const body = parseBody(evaluateBody, req.body);
    if (!auth.project.workflows.has(body.workflow))
      throw new GatewayError(
        'workflow_not_found',
        `Workflow "${body.workflow}" does not exist in this project.`,
        {
          param: 'workflow',
        },
      );
    const rules = rulesFor(auth.project, body.workflow, auth.key.keyId);
    const found = rules ? rules.compiled.scan(body.text, body.direction) : [];
    const block = found.find((f) => f.mode === 'block');
    const masked = found.filter((f) => f.mode === 'redact');
    return {
      object: 'guardrail.evaluation',
      workflow: body.workflow,
      direction: body.direction,
      action: block ? 'block' : masked.length ? 'redact' : 'allow',
      blocked_by: block?.rule ?? null,
      findings: found.map((f) => ({
        rule: f.rule,
        detector: f.detector,
        label: f.label,
        mode: f.mode,
        start: f.start,
        end: f.end,
        hash: f.hash,
      })),
      redacted_text: masked.length ? redact(body.text, masked) : body.text,
      rules: rules ? [...rules.modes.keys()] : [],
      not_evaluated: rules ? rules.webhooks.map((w) => w.rule) : [],
    };
  });
}
