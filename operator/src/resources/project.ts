import { z } from 'zod';
import { DEFAULT_WEBHOOK_EVENT_TYPES, REQUEST_LOGS, STORED_RESPONSES, WEBHOOK_EVENT_TYPES } from '#contract';
import {
  ageColumn,
  conditions,
  type KindInfo,
  objectMeta,
  observedGeneration,
  rateLimit,
  readyColumn,
  reasonColumn,
  secretKeyRef,
} from './common.ts';

const REQUEST_LOGS_DEFAULT = {
  bodies: REQUEST_LOGS.defaultBodies,
  maxEntries: REQUEST_LOGS.defaultMaxEntries,
};

const requestLogs = z
  .object({
    bodies: z.boolean().default(REQUEST_LOGS.defaultBodies).meta({
      description:
        'Store request and response bodies (messages, prompts, answers) in request-log entries. They may hold personal data, so the default is false: entries then carry only metadata (workflow, attempts, usage, cost, status, cache fields).',
    }),
    maxEntries: z
      .number()
      .int()
      .min(REQUEST_LOGS.minMaxEntries)
      .max(REQUEST_LOGS.maxMaxEntries)
      .default(REQUEST_LOGS.defaultMaxEntries)
      .meta({
        description: `How many entries the project's request-log stream keeps; older entries are trimmed. Default ${REQUEST_LOGS.defaultMaxEntries}, between ${REQUEST_LOGS.minMaxEntries} and ${REQUEST_LOGS.maxMaxEntries}.`,
      }),
  })
  .meta({
    description:
      'Request logs: one entry per request, webhook attempt, callback and session summary, read with GET /api/v1/request-logs. API keys are never stored.',
  });

const STORED_RESPONSES_DEFAULT = { retentionDays: STORED_RESPONSES.defaultRetentionDays };

const storedResponses = z
  .object({
    retentionDays: z
      .number()
      .int()
      .min(STORED_RESPONSES.minRetentionDays)
      .max(STORED_RESPONSES.maxRetentionDays)
      .default(STORED_RESPONSES.defaultRetentionDays)
      .meta({
        description: `Days a stored response is kept after it was answered. Default ${STORED_RESPONSES.defaultRetentionDays}, between ${STORED_RESPONSES.minRetentionDays} and ${STORED_RESPONSES.maxRetentionDays}.`,
      }),
  })
  .meta({
    description:
      'Responses stored by POST /v1/responses (store: true, the default): read back with GET /v1/responses/{id} and continued with previous_response_id. They hold the conversation, so they may hold personal data.',
  });

export const projectSpec = z
  .object({
    displayName: z
      .string()
      .max(200)
      .optional()
      .meta({ description: 'Human-friendly project name shown in consoles.' }),
    compatibleApi: z
      .object({
        enabled: z.boolean().default(true).meta({
          description: 'Serve the OpenAI-compatible surface (/chat/completions, /models). Default true.',
        }),
      })
      .default({ enabled: true })
      .meta({
        description: 'The OpenAI-compatible API surface; when disabled it answers feature_disabled (503).',
      }),
    rateLimit: rateLimit.optional(),
    webhooks: z
      .array(
        z
          .object({
            url: z
              .string()
              .max(2048)
              .regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL')
              .meta({
                description: 'Receiver URL; deliveries are POSTed JSON signed with service-signature.',
              }),
            secretRef: secretKeyRef('HMAC signing secret for deliveries', 'secret'),
            events: z
              .array(z.enum(WEBHOOK_EVENT_TYPES).meta({ description: 'An event type.' }))
              .min(1)
              .max(WEBHOOK_EVENT_TYPES.length)
              .default([...DEFAULT_WEBHOOK_EVENT_TYPES])
              .meta({
                description: `Events delivered to this URL: ${WEBHOOK_EVENT_TYPES.join(', ')}. Default ${DEFAULT_WEBHOOK_EVENT_TYPES.join(', ')}.`,
              }),
          })
          .meta({ description: 'A webhook receiver.' }),
      )
      .max(10)
      .optional()
      .meta({ description: 'Webhook receivers for async results and pipeline events.' }),
    outboundFetch: z
      .object({
        allowPrivateNetworks: z.boolean().default(false).meta({
          description:
            'Allow webhooks and image_url downloads to reach private, loopback and link-local addresses.',
        }),
      })
      .optional()
      .meta({ description: 'Rules for requests the gateway makes on behalf of this project.' }),
    requestLogs: requestLogs.default(REQUEST_LOGS_DEFAULT),
    storedResponses: storedResponses.default(STORED_RESPONSES_DEFAULT),
  })
  .meta({ description: 'A project groups workflows, API keys and spend caps; API keys identify it.' });

export const projectStatus = z
  .object({
    projectId: z.string().optional().meta({ description: 'The API project_id: <namespace>.<name>.' }),
    workflows: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Number of Ready workflows in the project.' }),
    apiKeys: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Number of usable API keys of the project.' }),
    webhooks: z
      .object({
        disabledEndpoints: z
          .array(z.string().meta({ description: 'A webhook URL.' }))
          .max(64)
          .meta({ description: 'Webhook URLs disabled because the receiver answered 410 Gone.' }),
        deadLetters: z
          .number()
          .int()
          .min(0)
          .meta({ description: 'Deliveries that used up their retries, kept for replay.' }),
      })
      .optional()
      .meta({ description: 'Webhook delivery health, as the gateways recorded it.' }),
    observedGeneration: observedGeneration.optional(),
    conditions: conditions.optional(),
  })
  .meta({ description: 'Observed state of the project.' });

export const project = z.object({
  apiVersion: z.literal('switchyard.dev/v1alpha1'),
  kind: z.literal('Project'),
  metadata: objectMeta,
  spec: projectSpec.default({
    compatibleApi: { enabled: true },
    requestLogs: REQUEST_LOGS_DEFAULT,
    storedResponses: STORED_RESPONSES_DEFAULT,
  }),
  status: projectStatus.optional(),
});
export type Project = z.infer<typeof project>;

export const projectInfo: KindInfo = {
  kind: 'Project',
  plural: 'projects',
  singular: 'project',
  shortNames: ['syproj'],
  categories: ['switchyard'],
  description: 'A Switchyard project: the owner of workflows, API keys and spend caps.',
  printerColumns: [
    { name: 'Project ID', type: 'string', jsonPath: '.status.projectId', description: 'The API project_id.' },
    { name: 'Workflows', type: 'integer', jsonPath: '.status.workflows', description: 'Ready workflows.' },
    { name: 'Keys', type: 'integer', jsonPath: '.status.apiKeys', description: 'Usable API keys.' },
    readyColumn,
    reasonColumn,
    ageColumn,
  ],
};
