import { z } from 'zod';
import { API_KEY_SCOPES, type ApiKeyScope } from '#contract';
import {
  ageColumn,
  conditions,
  describeValues,
  type KindInfo,
  localRef,
  objectMeta,
  observedGeneration,
  rateLimit,
  readyColumn,
  reasonColumn,
  secretKeyRef,
} from './common.ts';

export const KEY_PREFIX = 'sy_live_';
export const MIN_KEY_LENGTH = 32;

const SCOPE_MEANING: Record<ApiKeyScope, string> = {
  ai: 'the AI endpoints',
  console: 'the console API',
  mcp: 'the MCP endpoint (/v1/mcp)',
};

export const apiKeySpec = z
  .object({
    projectRef: localRef('Project'),
    scopes: z
      .array(z.enum(API_KEY_SCOPES).meta({ description: describeValues(SCOPE_MEANING) }))
      .min(1)
      .max(API_KEY_SCOPES.length)
      .default(['ai'])
      .meta({ description: 'What the key may call. Default [ai].', 'x-kubernetes-list-type': 'set' }),
    expiresAt: z
      .string()
      .optional()
      .meta({ description: 'The key stops working at this time (RFC 3339).', format: 'date-time' }),
    revoked: z.boolean().default(false).meta({ description: 'Revoke the key at once.' }),
    rateLimit: rateLimit.optional(),
    toolGrants: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z0-9_.*-]{1,160}$/, 'must be a tool name pattern: letters, digits, _ . - and * only')
          .meta({ description: 'A pattern over prefixed tool names, e.g. github__* or search__query.' }),
      )
      .max(256)
      .optional()
      .meta({
        description:
          'MCP tools this key may list and call (needs the mcp scope): patterns over prefixed names <toolPrefix>__<tool>, * matching any run of characters. Unset: no tool.',
        'x-kubernetes-list-type': 'set',
      }),
    secretRef: secretKeyRef('API key (must start with sy_live_ and be at least 32 characters)', 'apiKey')
      .optional()
      .meta({
        description:
          'Use the key in this Secret. Without it the operator generates a key into a Secret it owns.',
      }),
    rotation: z
      .object({
        generation: z.number().int().min(0).default(0).meta({
          description:
            'Increase to issue a new generated key; the previous one keeps working for the grace period.',
        }),
        gracePeriodSeconds: z.number().int().min(0).max(2_592_000).default(86_400).meta({
          description: 'How long the previous key keeps working after a rotation. Default one day.',
        }),
      })
      .optional()
      .meta({ description: 'Key rotation.' }),
  })
  .meta({ description: 'A project API key (Bearer secret) and what it may do.' });

export const apiKeyStatus = z
  .object({
    keyPrefix: z.string().max(12).optional().meta({ description: 'First 12 characters of the current key.' }),
    secretName: z.string().optional().meta({ description: 'Secret that holds the current key.' }),
    rotationGeneration: z
      .number()
      .int()
      .optional()
      .meta({ description: 'rotation.generation of the current key.' }),
    previousKeyValidUntil: z
      .string()
      .optional()
      .meta({ description: 'Until when the pre-rotation key still works (RFC 3339).', format: 'date-time' }),
    observedGeneration: observedGeneration.optional(),
    conditions: conditions.optional(),
  })
  .meta({
    description: 'Observed state of the key. Never holds key material beyond the 12-character prefix.',
  });

export const apiKey = z.object({
  apiVersion: z.literal('switchyard.dev/v1alpha1'),
  kind: z.literal('ApiKey'),
  metadata: objectMeta,
  spec: apiKeySpec,
  status: apiKeyStatus.optional(),
});
export type ApiKey = z.infer<typeof apiKey>;

export const apiKeyInfo: KindInfo = {
  kind: 'ApiKey',
  plural: 'apikeys',
  singular: 'apikey',
  shortNames: ['sykey'],
  categories: ['switchyard'],
  description: 'A project API key.',
  printerColumns: [
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name', description: 'Owning project.' },
    {
      name: 'Prefix',
      type: 'string',
      jsonPath: '.status.keyPrefix',
      description: 'First 12 characters of the key.',
    },
    { name: 'Scopes', type: 'string', jsonPath: '.spec.scopes', description: 'Granted scopes.' },
    { name: 'Expires', type: 'string', jsonPath: '.spec.expiresAt', description: 'Expiry time.' },
    {
      name: 'Revoked',
      type: 'boolean',
      jsonPath: '.spec.revoked',
      description: 'Whether the key is revoked.',
    },
    readyColumn,
    reasonColumn,
    ageColumn,
  ],
};
