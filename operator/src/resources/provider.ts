import { z } from 'zod';
import {
  ageColumn,
  cel,
  conditions,
  type KindInfo,
  objectMeta,
  observedGeneration,
  readyColumn,
  reasonColumn,
  requestType,
  secretKeyRef,
  usd,
} from './common.ts';

export const PROVIDER_TYPES = ['openai', 'azure-openai', 'anthropic', 'gemini', 'openai-compatible'] as const;

/** Types whose public endpoint is well known; the others must name their baseURL. */
export const DEFAULT_BASE_URLS: Partial<Record<(typeof PROVIDER_TYPES)[number], string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

const pricing = z
  .object({
    inputUsdPerMTok: usd('Price of one million input (prompt) tokens.').optional(),
    outputUsdPerMTok: usd('Price of one million output (completion) tokens.').optional(),
    usdPerImage: usd('Price of one generated image.').optional(),
    usdPerAudioSecond: usd('Price of one second of audio.').optional(),
  })
  .meta({ description: 'Prices used for spend accounting and spend caps. Unset prices count as unknown.' });

export const providerModel = z
  .object({
    name: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: 'Model name as the provider knows it (deployment name on Azure).' }),
    requestTypes: z.array(requestType).min(1).max(6).default(['chat']).meta({
      description: 'Request types this model serves. Default [chat].',
      'x-kubernetes-list-type': 'set',
    }),
    pricing: pricing.optional(),
  })
  .meta({ description: 'A model offered by the provider.' });

export const providerSpec = z
  .object({
    type: z
      .enum(PROVIDER_TYPES)
      .meta({ description: `Wire protocol of the provider: ${PROVIDER_TYPES.join(', ')}.` }),
    baseURL: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL')
      .optional()
      .meta({
        description:
          'Base URL of the API. Defaults per type (openai, anthropic, gemini); required for azure-openai (https://<resource>.openai.azure.com) and openai-compatible.',
      }),
    apiVersion: z
      .string()
      .max(64)
      .optional()
      .meta({ description: 'API version query parameter for azure-openai, e.g. 2024-10-21.' }),
    credentials: z
      .object({ secretRef: secretKeyRef('provider API key', 'apiKey') })
      .optional()
      .meta({
        description:
          'Where the provider API key is. Optional only for openai-compatible servers without auth.',
      }),
    streaming: z.boolean().default(true).meta({
      description:
        'Whether the provider streams; when false, streamed requests are answered as one replayed SSE.',
    }),
    timeouts: z
      .object({
        connectMs: z
          .number()
          .int()
          .min(1)
          .max(600_000)
          .default(5_000)
          .meta({ description: 'TCP+TLS connect timeout in ms.' }),
        firstByteMs: z
          .number()
          .int()
          .min(1)
          .max(3_600_000)
          .default(60_000)
          .meta({ description: 'Time to the response headers in ms.' }),
        totalMs: z
          .number()
          .int()
          .min(1)
          .max(3_600_000)
          .default(300_000)
          .meta({ description: 'Deadline of the whole upstream call in ms, body included.' }),
      })
      .default({ connectMs: 5_000, firstByteMs: 60_000, totalMs: 300_000 })
      .meta({ description: 'Upstream timeouts; a timeout is retryable and moves to the next backup.' }),
    models: z
      .array(providerModel)
      .min(1)
      .max(500)
      .meta({
        description: 'Models this provider offers, with the request types they support and their pricing.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
  })
  .meta({
    description: 'An upstream AI provider account: protocol, endpoint, credentials, timeouts and models.',
    ...cel(
      {
        rule: "self.type in ['openai', 'anthropic', 'gemini'] || has(self.baseURL)",
        message: 'baseURL is required for azure-openai and openai-compatible providers',
        fieldPath: '.baseURL',
      },
      {
        rule: "self.type == 'openai-compatible' || has(self.credentials)",
        message: 'credentials.secretRef is required for this provider type',
        fieldPath: '.credentials',
      },
      {
        rule: 'self.timeouts.firstByteMs <= self.timeouts.totalMs',
        message: 'timeouts.firstByteMs must not exceed timeouts.totalMs',
        fieldPath: '.timeouts.firstByteMs',
      },
    ),
  })
  .superRefine((spec, ctx) => {
    if (!DEFAULT_BASE_URLS[spec.type] && !spec.baseURL)
      ctx.addIssue({
        code: 'custom',
        path: ['baseURL'],
        message: 'baseURL is required for azure-openai and openai-compatible providers',
      });
    if (spec.type !== 'openai-compatible' && !spec.credentials)
      ctx.addIssue({
        code: 'custom',
        path: ['credentials'],
        message: 'credentials.secretRef is required for this provider type',
      });
    if (spec.timeouts.firstByteMs > spec.timeouts.totalMs)
      ctx.addIssue({
        code: 'custom',
        path: ['timeouts', 'firstByteMs'],
        message: 'timeouts.firstByteMs must not exceed timeouts.totalMs',
      });
  });

export const providerStatus = z
  .object({
    models: z.number().int().min(0).optional().meta({ description: 'Number of models offered.' }),
    observedGeneration: observedGeneration.optional(),
    conditions: conditions.optional(),
  })
  .meta({ description: 'Observed state of the provider.' });

export const provider = z.object({
  apiVersion: z.literal('switchyard.dev/v1alpha1'),
  kind: z.literal('Provider'),
  metadata: objectMeta,
  spec: providerSpec,
  status: providerStatus.optional(),
});
export type Provider = z.infer<typeof provider>;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

export const providerInfo: KindInfo = {
  kind: 'Provider',
  plural: 'providers',
  singular: 'provider',
  shortNames: ['syprov'],
  categories: ['switchyard'],
  description: 'An upstream AI provider account used by workflows in the same namespace.',
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Provider protocol.' },
    { name: 'Models', type: 'integer', jsonPath: '.status.models', description: 'Models offered.' },
    {
      name: 'Streaming',
      type: 'boolean',
      jsonPath: '.spec.streaming',
      description: 'Whether it streams.',
      priority: 1,
    },
    {
      name: 'Base URL',
      type: 'string',
      jsonPath: '.spec.baseURL',
      description: 'API base URL.',
      priority: 1,
    },
    readyColumn,
    reasonColumn,
    ageColumn,
  ],
};
