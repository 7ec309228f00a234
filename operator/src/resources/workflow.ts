import { z } from 'zod';
import {
  HOSTED_TOOL_ACTIONS,
  SESSION_MEMORY,
  STRUCTURED_REQUEST_TYPES,
  takesStructuredOutput,
} from '#contract';
import {
  ageColumn,
  cel,
  celList,
  conditions,
  DNS_SUBDOMAIN,
  type KindInfo,
  localRef,
  objectMeta,
  observedGeneration,
  readyColumn,
  reasonColumn,
  requestType,
  wordList,
} from './common.ts';

export const MAX_BACKUPS = 10;
const STRUCTURED_ONLY = `structuredOutput is only allowed for ${wordList(STRUCTURED_REQUEST_TYPES, 'and')} workflows`;

/** A Provider is referenced by its metadata.name, so anything but an RFC 1123 subdomain never resolves. */
const providerName = (description: string) =>
  z
    .string()
    .min(1)
    .max(253)
    .regex(DNS_SUBDOMAIN, 'must be the name of a Provider (a lowercase RFC 1123 subdomain)')
    .meta({ description });

const modelSlot = (what: string) =>
  z
    .object({
      provider: providerName(`Name of the Provider (same namespace) of the ${what}.`),
      model: z
        .string()
        .min(1)
        .max(200)
        .meta({ description: `Model of the ${what}; must be listed by that Provider.` }),
    })
    .meta({ description: `The ${what} provider and model.` });

export const workflowSpec = z
  .object({
    projectRef: localRef('Project'),
    name: z
      .string()
      .min(1)
      .max(128)
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._:/-]*$/,
        'must start with a letter or digit and hold only letters, digits, . _ : / -',
      )
      .optional()
      .meta({
        description:
          'The API name clients send as `workflow` or `model`, matched case-sensitively. Defaults to metadata.name.',
      }),
    description: z.string().max(2000).optional().meta({ description: 'What the workflow is for.' }),
    requestType: requestType.default('chat'),
    provider: providerName('Name of the primary Provider in the same namespace.'),
    model: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: 'Primary model; must be listed by the Provider for requestType.' }),
    backups: z
      .array(modelSlot('backup'))
      .max(MAX_BACKUPS)
      .optional()
      .meta({ description: 'Ordered failover targets; position = index + 1, slot name backup-<position>.' }),
    systemInstructions: z
      .string()
      .max(100_000)
      .optional()
      .meta({ description: 'System prompt placed before the messages of every request.' }),
    structuredOutput: z
      .object({
        schema: z.record(z.string(), z.unknown()).meta({
          description: 'JSON Schema the answer must conform to.',
          'x-kubernetes-preserve-unknown-fields': true,
        }),
      })
      .optional()
      .meta({ description: 'Structured output: answers are JSON objects checked against the schema.' }),
    cacheFields: z
      .array(
        z
          .string()
          .max(256)
          .regex(/^(metadata|inputs|context)(\.[A-Za-z0-9_-]+)+$/, 'must be a path like metadata.customer_id')
          .meta({ description: 'A request path such as metadata.customer_id.' }),
      )
      .max(32)
      .optional()
      .meta({
        description: 'Request values echoed in customer_data and in request logs.',
        'x-kubernetes-list-type': 'set',
      }),
    sessionMemory: z
      .object({
        enabled: z
          .boolean()
          .default(false)
          .meta({ description: 'Keep conversation history per session_id.' }),
        summarizeAtTokens: z
          .number()
          .int()
          .min(200)
          .max(1_000_000)
          .default(SESSION_MEMORY.defaultSummarizeAtTokens)
          .meta({ description: 'History is summarised lazily at about this many tokens.' }),
        ttlSeconds: z
          .number()
          .int()
          .min(SESSION_MEMORY.minTtlSeconds)
          .max(SESSION_MEMORY.maxTtlSeconds)
          .default(SESSION_MEMORY.defaultTtlSeconds)
          .meta({
            description: `A session expires after this many idle seconds (default ${SESSION_MEMORY.defaultTtlSeconds}, between ${SESSION_MEMORY.minTtlSeconds} and ${SESSION_MEMORY.maxTtlSeconds}).`,
          }),
      })
      .optional()
      .meta({ description: 'Session memory (off by default).' }),
    eventName: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'must hold only letters, digits, . _ : -')
      .optional()
      .meta({ description: 'Makes this a backend-pipeline workflow: async only, results await a callback.' }),
    responseCache: z
      .object({
        ttlSeconds: z
          .number()
          .int()
          .min(1)
          .max(2_592_000)
          .meta({ description: 'How long identical requests are served from cache.' }),
      })
      .optional()
      .meta({ description: 'Response cache for identical requests (sessions bypass it).' }),
    hostedTools: z
      .object({
        default: z.enum(HOSTED_TOOL_ACTIONS).default('refuse').meta({
          description:
            'What happens to a hosted tool the tools map does not name: refuse (a 400 naming it) or omit.',
        }),
        tools: z
          .record(
            z
              .string()
              .min(1)
              .max(64)
              .regex(/^[a-z0-9_]+$/, 'must be a tool type such as web_search'),
            z.enum(HOSTED_TOOL_ACTIONS).meta({ description: 'refuse (a 400 naming the tool) or omit.' }),
          )
          .optional()
          .meta({ description: 'Per hosted tool type (web_search, file_search, mcp, ...): refuse or omit.' }),
      })
      .optional()
      .meta({
        description:
          'Responses requests: what happens to hosted tools (any tool type but function, custom and namespace), which no provider of the gateway runs. Omitted tools are named in the x-service-omitted-tools header and the request log. Absent: every hosted tool is refused.',
      }),
    testMode: z.boolean().default(false).meta({
      description: 'Answer from the built-in deterministic generator at zero cost; never call a provider.',
    }),
  })
  .meta({
    description: 'A saved route: primary provider and model, ordered backups and request handling options.',
    ...cel({
      rule: `!has(self.structuredOutput) || self.requestType in ${celList(STRUCTURED_REQUEST_TYPES)}`,
      message: STRUCTURED_ONLY,
      fieldPath: '.structuredOutput',
    }),
  })
  .superRefine((spec, ctx) => {
    if (spec.structuredOutput && !takesStructuredOutput(spec.requestType))
      ctx.addIssue({ code: 'custom', path: ['structuredOutput'], message: STRUCTURED_ONLY });
  });

export const workflowStatus = z
  .object({
    apiName: z
      .string()
      .optional()
      .meta({ description: 'The name clients use (spec.name or metadata.name).' }),
    backups: z.number().int().min(0).optional().meta({ description: 'Number of configured backups.' }),
    route: z.string().optional().meta({ description: 'Primary route as <provider>/<model>.' }),
    observedGeneration: observedGeneration.optional(),
    conditions: conditions.optional(),
  })
  .meta({ description: 'Observed state of the workflow.' });

export const workflow = z.object({
  apiVersion: z.literal('switchyard.dev/v1alpha1'),
  kind: z.literal('Workflow'),
  metadata: objectMeta,
  spec: workflowSpec,
  status: workflowStatus.optional(),
});
export type Workflow = z.infer<typeof workflow>;

export const workflowInfo: KindInfo = {
  kind: 'Workflow',
  plural: 'workflows',
  singular: 'workflow',
  shortNames: ['wf'],
  categories: ['switchyard'],
  description: 'A named AI route of a project, with failover backups.',
  printerColumns: [
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name', description: 'Owning project.' },
    { name: 'Type', type: 'string', jsonPath: '.spec.requestType', description: 'Request type.' },
    { name: 'Provider', type: 'string', jsonPath: '.spec.provider', description: 'Primary provider.' },
    { name: 'Model', type: 'string', jsonPath: '.spec.model', description: 'Primary model.' },
    { name: 'Backups', type: 'integer', jsonPath: '.status.backups', description: 'Configured backups.' },
    {
      name: 'Test',
      type: 'boolean',
      jsonPath: '.spec.testMode',
      description: 'Answers offline.',
      priority: 1,
    },
    readyColumn,
    reasonColumn,
    ageColumn,
  ],
};
