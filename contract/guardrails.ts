import { z } from 'zod';

/**
 * Guardrails as the gateway sees them: compiled from `Guardrail` resources, no Kubernetes types.
 * A Guardrail attaches to its whole project, to named workflows, or to named API keys; its rules run
 * on prompts (`input`), answers (`output`) or both. Scope resolves project → workflow → key: every
 * attached rule runs, a `block` anywhere wins, and a narrower Guardrail may switch off a wider one's
 * rule by name unless that rule is `enforced`.
 */

export const GUARDRAIL_MODES = ['block', 'redact', 'monitor'] as const;
export type GuardrailMode = (typeof GUARDRAIL_MODES)[number];
export const GUARDRAIL_DIRECTIONS = ['input', 'output', 'both'] as const;
export const GUARDRAIL_FAIL_MODES = ['open', 'closed'] as const;
/** National identifiers the built-in detector knows, each validated beyond its shape. */
export const NATIONAL_ID_KINDS = ['us-ssn', 'uk-nino', 'de-steuer-id', 'fr-nir', 'in-aadhaar'] as const;

export const GUARDRAIL = {
  maxRulesPerGuardrail: 64,
  maxPatternLength: 1_000,
  maxListEntries: 10_000,
  defaultWebhookTimeoutMs: 500,
  maxWebhookTimeoutMs: 10_000,
} as const;

const sealed = z.object({ alg: z.literal('A256GCM'), iv: z.string(), tag: z.string(), data: z.string() });

/** What a rule looks for. Patterns use RE2 syntax and always run on a linear-time engine. */
export const guardrailDetector = z.discriminatedUnion('type', [
  z.object({ type: z.literal('card') }),
  z.object({ type: z.literal('iban') }),
  /** `regions`: ISO 3166 alpha-2 codes for numbers written without a `+` country code. */
  z.object({ type: z.literal('phone'), regions: z.array(z.string().length(2)).default(['US']) }),
  z.object({ type: z.literal('email') }),
  z.object({ type: z.literal('nationalId'), kinds: z.array(z.enum(NATIONAL_ID_KINDS)).min(1) }),
  z.object({ type: z.literal('secret') }),
  z.object({
    type: z.literal('pattern'),
    /** The placeholder's type when redacting, e.g. `TICKET` → `[TICKET]`. */
    label: z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/),
    pattern: z.string().min(1).max(GUARDRAIL.maxPatternLength),
    caseInsensitive: z.boolean().default(false),
  }),
  z.object({
    type: z.literal('denyList'),
    words: z.array(z.string().min(1)).min(1).max(GUARDRAIL.maxListEntries),
    caseInsensitive: z.boolean().default(true),
  }),
  /** Heuristic: scores known injection phrasings; documented as such. */
  z.object({ type: z.literal('promptInjection'), threshold: z.number().min(0).max(1).default(0.5) }),
  z.object({
    type: z.literal('size'),
    maxInputChars: z.number().int().positive().optional(),
    maxOutputChars: z.number().int().positive().optional(),
  }),
  /** External check: text and metadata out, a verdict and optional redactions back. */
  z.object({
    type: z.literal('webhook'),
    url: z.string().url(),
    secret: sealed.optional(),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(GUARDRAIL.maxWebhookTimeoutMs)
      .default(GUARDRAIL.defaultWebhookTimeoutMs),
  }),
]);
export type GuardrailDetector = z.infer<typeof guardrailDetector>;

export const guardrailRule = z.object({
  /** Unique within the Guardrail; names the rule in errors, headers, logs and metrics. */
  name: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/),
  detector: guardrailDetector,
  mode: z.enum(GUARDRAIL_MODES),
  direction: z.enum(GUARDRAIL_DIRECTIONS).default('both'),
  /** Only on a project-wide Guardrail: narrower Guardrails cannot switch it off. */
  enforced: z.boolean().default(false),
  /** When the check itself fails (a webhook down, slow or garbled). Default: closed for block, open otherwise. */
  failMode: z.enum(GUARDRAIL_FAIL_MODES).optional(),
});
export type GuardrailRule = z.infer<typeof guardrailRule>;

export const guardrailAttachment = z.discriminatedUnion('scope', [
  z.object({ scope: z.literal('project') }),
  z.object({ scope: z.literal('workflows'), workflows: z.array(z.string()).min(1) }),
  /** `keyIds` are `<namespace>/<name>` of ApiKeys, as in the snapshot's keys. */
  z.object({ scope: z.literal('keys'), keyIds: z.array(z.string()).min(1) }),
]);

export const snapshotGuardrail = z.object({
  name: z.string(),
  /** `<namespace>/<metadata.name>` of the source object. */
  source: z.string(),
  attach: guardrailAttachment,
  rules: z.array(guardrailRule).max(GUARDRAIL.maxRulesPerGuardrail),
  /** Values never reported by this Guardrail's detectors (exact strings, e.g. a support address). */
  allow: z.array(z.string()).max(GUARDRAIL.maxListEntries).default([]),
  /** `<guardrail>/<rule>` of wider-scope rules to switch off here; enforced rules ignore it. */
  disable: z.array(z.string()).default([]),
});
export type SnapshotGuardrail = z.infer<typeof snapshotGuardrail>;
