import { z } from 'zod';
import { SPEND_CAP_SCOPES, SPEND_PERIODS, type SpendCapScope } from '#contract';
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
  usd,
  wordList,
} from './common.ts';

const PROJECT: SpendCapScope = 'project';
const WORKFLOW: SpendCapScope = 'workflow';
const SCOPE_MEANING: Record<SpendCapScope, string> = {
  project: 'caps the whole project',
  workflow: 'caps one model slot of one workflow',
};
const NEEDS_SLOT = 'a workflow-scope SpendCap needs workflowRef and slot';
const NO_SLOT = 'a project-scope SpendCap must not set workflowRef or slot';

export const SPEND_STATES = ['ok', 'warning', 'critical', 'exceeded'] as const;
export const SLOT_PATTERN = /^(primary|backup-([1-9]|10))$/;

export const spendCapSpec = z
  .object({
    projectRef: localRef('Project'),
    scope: z.enum(SPEND_CAP_SCOPES).meta({ description: describeValues(SCOPE_MEANING) }),
    workflowRef: localRef('Workflow').optional().meta({ description: 'The Workflow (workflow scope only).' }),
    slot: z
      .string()
      .regex(SLOT_PATTERN, 'must be primary or backup-<n>')
      .optional()
      .meta({ description: 'The model slot: primary or backup-<position> (workflow scope only).' }),
    period: z.enum(SPEND_PERIODS).meta({
      description: `Reset period, aligned to UTC (weeks start Monday 00:00 UTC): ${wordList(SPEND_PERIODS)}.`,
    }),
    limitUsd: usd('Spend limit per period.'),
  })
  .meta({
    description: 'A spend cap for a project or for one model slot of a workflow.',
    ...cel(
      {
        rule: `self.scope == ${celString(WORKFLOW)} ? (has(self.workflowRef) && has(self.slot)) : true`,
        message: NEEDS_SLOT,
        fieldPath: '.workflowRef',
      },
      {
        rule: `self.scope == ${celString(PROJECT)} ? (!has(self.workflowRef) && !has(self.slot)) : true`,
        message: NO_SLOT,
        fieldPath: '.scope',
      },
    ),
  })
  .superRefine((spec, ctx) => {
    if (spec.scope === WORKFLOW && (!spec.workflowRef || !spec.slot))
      ctx.addIssue({ code: 'custom', path: ['workflowRef'], message: NEEDS_SLOT });
    if (spec.scope === PROJECT && (spec.workflowRef || spec.slot))
      ctx.addIssue({ code: 'custom', path: ['scope'], message: NO_SLOT });
  });

export const spendCapStatus = z
  .object({
    spentUsd: z
      .string()
      .optional()
      .meta({ description: 'Spend in the current period (decimal string, lags up to ~10 s).' }),
    state: z
      .enum(SPEND_STATES)
      .optional()
      .meta({ description: 'ok, warning (80 %), critical (90 %) or exceeded.' }),
    resetAt: z
      .string()
      .optional()
      .meta({ description: 'When the current period ends (RFC 3339, UTC).', format: 'date-time' }),
    observedGeneration: observedGeneration.optional(),
    conditions: conditions.optional(),
  })
  .meta({ description: 'Observed spend of the cap.' });

export const spendCap = z.object({
  apiVersion: z.literal('switchyard.dev/v1alpha1'),
  kind: z.literal('SpendCap'),
  metadata: objectMeta,
  spec: spendCapSpec,
  status: spendCapStatus.optional(),
});
export type SpendCap = z.infer<typeof spendCap>;

export const spendCapInfo: KindInfo = {
  kind: 'SpendCap',
  plural: 'spendcaps',
  singular: 'spendcap',
  shortNames: ['sycap'],
  categories: ['switchyard'],
  description: 'A spend cap for a project or a workflow model slot.',
  printerColumns: [
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name', description: 'Owning project.' },
    { name: 'Scope', type: 'string', jsonPath: '.spec.scope', description: `${wordList(SPEND_CAP_SCOPES)}.` },
    {
      name: 'Workflow',
      type: 'string',
      jsonPath: '.spec.workflowRef.name',
      description: 'Capped workflow.',
      priority: 1,
    },
    { name: 'Slot', type: 'string', jsonPath: '.spec.slot', description: 'Capped slot.', priority: 1 },
    { name: 'Period', type: 'string', jsonPath: '.spec.period', description: 'Reset period.' },
    { name: 'Limit', type: 'string', jsonPath: '.spec.limitUsd', description: 'Limit in USD.' },
    { name: 'Spent', type: 'string', jsonPath: '.status.spentUsd', description: 'Spent this period in USD.' },
    {
      name: 'State',
      type: 'string',
      jsonPath: '.status.state',
      description: 'ok, warning, critical or exceeded.',
    },
    {
      name: 'Resets',
      type: 'string',
      jsonPath: '.status.resetAt',
      description: 'End of the period.',
      priority: 1,
    },
    readyColumn,
    ageColumn,
  ],
};
