import { z } from 'zod';
import {
  GUARDRAIL,
  GUARDRAIL_DIRECTIONS,
  GUARDRAIL_FAIL_MODES,
  GUARDRAIL_MODES,
  type GuardrailDetector,
  NATIONAL_ID_KINDS,
} from '#contract';
import {
  ageColumn,
  cel,
  celString,
  conditions,
  describeValues,
  type KindInfo,
  localRef,
  objectMeta,
  observedGeneration,
  readyColumn,
  reasonColumn,
  secretKeyRef,
  wordList,
} from './common.ts';

export const GUARDRAIL_SCOPES = ['project', 'workflows', 'keys'] as const;
export type GuardrailScope = (typeof GUARDRAIL_SCOPES)[number];
export type DetectorType = GuardrailDetector['type'];

const DETECTOR_MEANING: Record<DetectorType, string> = {
  card: 'payment card numbers (Luhn-checked)',
  iban: 'IBANs (checksum and country length checked)',
  phone: 'phone numbers, validated per country (regions)',
  email: 'e-mail addresses',
  nationalId: 'national identifiers of the listed kinds',
  secret: 'secrets and API keys (known token formats)',
  pattern: 'a user pattern in RE2 syntax (pattern, label)',
  denyList: 'any of the listed words or phrases (words)',
  promptInjection: 'known prompt-injection phrasings (heuristic; threshold)',
  size: 'prompts or answers longer than maxInputChars / maxOutputChars',
  webhook: 'an external check at url (text and metadata out, a verdict back)',
};
const DETECTOR_TYPES = Object.keys(DETECTOR_MEANING) as [DetectorType, ...DetectorType[]];

const MODE_MEANING: Record<(typeof GUARDRAIL_MODES)[number], string> = {
  block: 'refuse the request (or end the answer) with guardrail_blocked',
  redact: 'replace each match with a typed placeholder such as [EMAIL]',
  monitor: 'record the finding only',
};
const SCOPE_MEANING: Record<GuardrailScope, string> = {
  project: 'every request of the project',
  workflows: 'requests to the workflows in workflowRefs',
  keys: 'requests made with the ApiKeys in apiKeyRefs',
};

/** What a rule of each type must set; `[field, message]`, mirrored by CEL and by zod. */
const REQUIRES: Partial<Record<DetectorType, { cel: string; fields: string[]; message: string }>> = {
  pattern: {
    cel: 'has(self.pattern) && has(self.label)',
    fields: ['pattern', 'label'],
    message: 'a pattern rule needs pattern and label',
  },
  denyList: { cel: 'has(self.words)', fields: ['words'], message: 'a denyList rule needs words' },
  nationalId: { cel: 'has(self.kinds)', fields: ['kinds'], message: 'a nationalId rule needs kinds' },
  webhook: { cel: 'has(self.url)', fields: ['url'], message: 'a webhook rule needs url' },
  size: {
    cel: 'has(self.maxInputChars) || has(self.maxOutputChars)',
    fields: [],
    message: 'a size rule needs maxInputChars or maxOutputChars',
  },
};
const ENFORCED_ONLY_PROJECT = 'enforced rules are only allowed on a project-scope Guardrail';
const NEEDS_WORKFLOWS = 'a workflows-scope Guardrail needs workflowRefs';
const NEEDS_KEYS = 'a keys-scope Guardrail needs apiKeyRefs';

const positive = (max: number, description: string) =>
  z.number().int().min(1).max(max).optional().meta({ description });

export const guardrailRuleSpec = z
  .object({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a lowercase RFC 1123 label')
      .meta({
        description: 'Unique within the Guardrail; names the rule in errors, headers, logs and metrics.',
      }),
    type: z
      .enum(DETECTOR_TYPES)
      .meta({ description: `What the rule looks for. ${describeValues(DETECTOR_MEANING)}` }),
    mode: z
      .enum(GUARDRAIL_MODES)
      .meta({ description: `What a finding does. ${describeValues(MODE_MEANING)}` }),
    direction: z
      .enum(GUARDRAIL_DIRECTIONS)
      .default('both')
      .meta({
        description: `Checked on prompts (input), answers (output) or ${wordList(GUARDRAIL_DIRECTIONS.slice(0, 2), 'and')} (both, the default).`,
      }),
    enforced: z.boolean().default(false).meta({
      description:
        'Project-scope Guardrails only: narrower Guardrails cannot switch this rule off with disable.',
    }),
    failMode: z.enum(GUARDRAIL_FAIL_MODES).optional().meta({
      description:
        'When the check itself fails (a webhook down, slow or garbled): closed refuses, open lets it pass. Default: closed for block rules, open otherwise.',
    }),
    regions: z
      .array(
        z
          .string()
          .length(2)
          .regex(/^[A-Z]{2}$/)
          .meta({ description: 'An ISO 3166 alpha-2 code.' }),
      )
      .max(50)
      .optional()
      .meta({ description: 'phone: countries of numbers written without a + country code (default US).' }),
    kinds: z
      .array(z.enum(NATIONAL_ID_KINDS).meta({ description: wordList(NATIONAL_ID_KINDS) }))
      .min(1)
      .max(NATIONAL_ID_KINDS.length)
      .optional()
      .meta({ description: `nationalId: which identifiers to look for: ${wordList(NATIONAL_ID_KINDS)}.` }),
    label: z
      .string()
      .regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'must be upper case, e.g. TICKET')
      .optional()
      .meta({ description: 'pattern: the placeholder type when redacting, e.g. TICKET gives [TICKET].' }),
    pattern: z.string().min(1).max(GUARDRAIL.maxPatternLength).optional().meta({
      description:
        'pattern: an RE2 regular expression, run on a linear-time engine. Checked when applied: a pattern RE2 cannot run (backreferences, lookaround) leaves the Guardrail out with reason InvalidPattern.',
    }),
    caseInsensitive: z
      .boolean()
      .optional()
      .meta({ description: 'pattern (default false) and denyList (default true): ignore letter case.' }),
    words: z
      .array(z.string().min(1).max(256).meta({ description: 'A word or phrase.' }))
      .min(1)
      .max(GUARDRAIL.maxListEntries)
      .optional()
      .meta({ description: 'denyList: words or phrases to look for, matched on word boundaries.' }),
    threshold: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .meta({ description: 'promptInjection: score from 0 to 1 above which a prompt counts (default 0.5).' }),
    maxInputChars: positive(100_000_000, 'size: the longest prompt allowed, in characters.'),
    maxOutputChars: positive(100_000_000, 'size: the longest answer allowed, in characters.'),
    url: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^https?:\/\//, 'must be an http(s) URL')
      .optional()
      .meta({ description: 'webhook: where the text and metadata are POSTed.' }),
    secretRef: secretKeyRef(
      'webhook signing secret (whsec_<base64>), for webhook rules',
      'secret',
    ).optional(),
    timeoutMs: positive(
      GUARDRAIL.maxWebhookTimeoutMs,
      `webhook: how long to wait for the verdict, in ms (default ${GUARDRAIL.defaultWebhookTimeoutMs}); past it the failMode applies.`,
    ),
  })
  .meta({
    description: 'One check: a detector, the mode a finding triggers and the direction it watches.',
    ...cel(
      ...Object.entries(REQUIRES).map(([type, r]) => ({
        rule: `self.type == ${celString(type)} ? (${r.cel}) : true`,
        message: r.message,
      })),
    ),
  });

const refList = (what: string) =>
  z
    .array(localRef(what))
    .min(1)
    .max(256)
    .optional()
    .meta({ description: `${what}s in the same namespace this Guardrail applies to.` });

export const guardrailSpec = z
  .object({
    projectRef: localRef('Project'),
    scope: z
      .enum(GUARDRAIL_SCOPES)
      .default('project')
      .meta({ description: `What the rules apply to. ${describeValues(SCOPE_MEANING)}` }),
    workflowRefs: refList('Workflow'),
    apiKeyRefs: refList('ApiKey'),
    rules: z
      .array(guardrailRuleSpec)
      .min(1)
      .max(GUARDRAIL.maxRulesPerGuardrail)
      .meta({
        description: 'The checks, each named; all of them run on every request the Guardrail applies to.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    allow: z
      .array(z.string().min(1).max(1024).meta({ description: 'An exact value.' }))
      .max(GUARDRAIL.maxListEntries)
      .optional()
      .meta({ description: 'Values never reported by these rules, e.g. the support address.' }),
    disable: z
      .array(
        z
          .string()
          .max(320)
          .regex(
            /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
            'must be <guardrail>/<rule>',
          )
          .meta({ description: '<guardrail>/<rule> of a wider Guardrail of the same project.' }),
      )
      .max(256)
      .optional()
      .meta({
        description:
          'Rules of wider-scope Guardrails to switch off where this one applies; enforced rules stay on (reported in status).',
      }),
  })
  .meta({
    description: 'Checks on prompts and answers, attached to a project, some workflows or some API keys.',
    ...cel(
      {
        rule: `self.scope == ${celString('project')} || self.rules.all(r, !has(r.enforced) || !r.enforced)`,
        message: ENFORCED_ONLY_PROJECT,
        fieldPath: '.rules',
      },
      {
        rule: `self.scope == ${celString('workflows')} ? has(self.workflowRefs) : true`,
        message: NEEDS_WORKFLOWS,
        fieldPath: '.workflowRefs',
      },
      {
        rule: `self.scope == ${celString('keys')} ? has(self.apiKeyRefs) : true`,
        message: NEEDS_KEYS,
        fieldPath: '.apiKeyRefs',
      },
    ),
  })
  .superRefine((spec, ctx) => {
    if (spec.scope !== 'project' && spec.rules.some((r) => r.enforced))
      ctx.addIssue({ code: 'custom', path: ['rules'], message: ENFORCED_ONLY_PROJECT });
    if (spec.scope === 'workflows' && !spec.workflowRefs)
      ctx.addIssue({ code: 'custom', path: ['workflowRefs'], message: NEEDS_WORKFLOWS });
    if (spec.scope === 'keys' && !spec.apiKeyRefs)
      ctx.addIssue({ code: 'custom', path: ['apiKeyRefs'], message: NEEDS_KEYS });
    const seen = new Set<string>();
    spec.rules.forEach((r, i) => {
      if (seen.has(r.name))
        ctx.addIssue({
          code: 'custom',
          path: ['rules', i, 'name'],
          message: `duplicate rule name ${r.name}`,
        });
      seen.add(r.name);
      const req = REQUIRES[r.type];
      const missing =
        req &&
        (req.fields.length
          ? req.fields.some((f) => r[f as keyof typeof r] === undefined)
          : !r.maxInputChars && !r.maxOutputChars);
      if (req && missing) ctx.addIssue({ code: 'custom', path: ['rules', i], message: req.message });
    });
  });

export const guardrailStatus = z
  .object({
    rules: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Number of rules compiled into the snapshot.' }),
    ignoredDisables: z
      .string()
      .max(4096)
      .optional()
      .meta({ description: 'Entries of disable that have no effect (enforced or unknown rules), with why.' }),
    observedGeneration: observedGeneration.optional(),
    conditions: conditions.optional(),
  })
  .meta({ description: 'Observed state of the Guardrail.' });

export const guardrail = z.object({
  apiVersion: z.literal('switchyard.dev/v1alpha1'),
  kind: z.literal('Guardrail'),
  metadata: objectMeta,
  spec: guardrailSpec,
  status: guardrailStatus.optional(),
});
export type Guardrail = z.infer<typeof guardrail>;
export type GuardrailRuleSpec = z.infer<typeof guardrailRuleSpec>;

export const guardrailInfo: KindInfo = {
  kind: 'Guardrail',
  plural: 'guardrails',
  singular: 'guardrail',
  shortNames: ['sygr'],
  categories: ['switchyard'],
  description: 'Checks on prompts and answers (redact, block or monitor) for a project, workflows or keys.',
  printerColumns: [
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name', description: 'Owning project.' },
    { name: 'Scope', type: 'string', jsonPath: '.spec.scope', description: `${wordList(GUARDRAIL_SCOPES)}.` },
    { name: 'Rules', type: 'integer', jsonPath: '.status.rules', description: 'Rules in the snapshot.' },
    readyColumn,
    reasonColumn,
    ageColumn,
  ],
};
