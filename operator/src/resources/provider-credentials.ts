import { z } from 'zod';
import type { ProviderType } from '#contract';
import { cel, DNS_SUBDOMAIN, secretKeyRef, wordList } from './common.ts';

/** How a Provider authenticates to its upstream: its `credentials` schema and the cloud defaults. */

/** Types that may run without credentials (self-hosted servers without auth). */
export const CREDENTIALS_OPTIONAL: readonly ProviderType[] = ['openai-compatible'];

/** The cloud endpoints credentials are exchanged at, unless the Provider's `endpoints` override them. */
export const DEFAULT_ENDPOINTS = {
  sts: (region: string) => `https://sts.${region}.amazonaws.com`,
  token: 'https://oauth2.googleapis.com/token',
  metadata: 'http://metadata.google.internal',
} as const;

/** Where IRSA (EKS) mounts the pod's web identity token when AWS_WEB_IDENTITY_TOKEN_FILE is unset. */
export const DEFAULT_WEB_IDENTITY_TOKEN_FILE = '/var/run/secrets/eks.amazonaws.com/serviceaccount/token';

export const ONE_CREDENTIAL =
  'credentials must name exactly one of secretRef, awsAccessKeys, webIdentity, workloadIdentity';

const secretKeyName = (defaultKey: string, what: string) =>
  z
    .string()
    .min(1)
    .max(253)
    .regex(/^[-._a-zA-Z0-9]+$/)
    .default(defaultKey)
    .meta({ description: `Key of the ${what} inside the Secret. Defaults to "${defaultKey}".` });

export const credentials = z
  .object({
    secretRef: secretKeyRef(
      'provider API key (vertex-ai: the service-account key file, JSON)',
      'apiKey',
    ).optional(),
    awsAccessKeys: z
      .object({
        name: z
          .string()
          .min(1)
          .max(253)
          .regex(DNS_SUBDOMAIN)
          .meta({ description: 'Name of a Secret in the same namespace.' }),
        accessKeyIdKey: secretKeyName('accessKeyId', 'access key id'),
        secretAccessKeyKey: secretKeyName('secretAccessKey', 'secret access key'),
        sessionTokenKey: secretKeyName('sessionToken', 'session token (used when the Secret has it)'),
      })
      .optional()
      .meta({
        description: 'bedrock: a Secret holding an AWS access key pair and, optionally, a session token.',
      }),
    webIdentity: z
      .object({
        roleArn: z
          .string()
          .max(2048)
          .regex(/^arn:[^:\s]+:iam::\d{12}:role\/\S+$/, 'must be an IAM role ARN')
          .optional()
          .meta({
            description: "IAM role to assume. Defaults to the pod's AWS_ROLE_ARN (set by EKS for IRSA).",
          }),
        tokenFile: z
          .string()
          .max(4096)
          .regex(/^\//, 'must be an absolute path')
          .optional()
          .meta({
            description: `Projected service-account token file. Defaults to the pod's AWS_WEB_IDENTITY_TOKEN_FILE, else ${DEFAULT_WEB_IDENTITY_TOKEN_FILE}; another file is read only when the gateway runs with SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES=true.`,
          }),
        sessionName: z
          .string()
          .min(2)
          .max(64)
          .regex(/^[\w+=,.@-]+$/)
          .default('switchyard')
          .meta({ description: 'Role session name recorded in CloudTrail. Defaults to "switchyard".' }),
      })
      .optional()
      .meta({
        description:
          "bedrock: the pod's web identity (EKS IRSA), exchanged for temporary keys with STS AssumeRoleWithWebIdentity and renewed before they expire.",
      }),
    workloadIdentity: z
      .object({
        serviceAccount: z
          .string()
          .min(1)
          .max(253)
          .regex(/^[-.@a-zA-Z0-9]+$/)
          .default('default')
          .meta({
            description: 'Service account whose token the metadata server issues. Defaults to "default".',
          }),
      })
      .optional()
      .meta({
        description:
          "vertex-ai: the pod's workload identity (GKE), access tokens from the metadata server, renewed before they expire.",
      }),
  })
  .meta({
    description: `How the gateway authenticates to the provider; exactly one of the fields. Optional only for ${wordList(CREDENTIALS_OPTIONAL)} servers without auth.`,
    ...cel({
      rule: '[has(self.secretRef), has(self.awsAccessKeys), has(self.webIdentity), has(self.workloadIdentity)].exists_one(x, x)',
      message: ONE_CREDENTIAL,
    }),
  });
export type ProviderCredentials = z.infer<typeof credentials>;
