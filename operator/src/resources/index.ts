import { z } from 'zod';
import { type ApiKey, apiKey, apiKeyInfo } from './apikey.ts';
import type { KindInfo } from './common.ts';
import { type Guardrail, guardrail, guardrailInfo } from './guardrail.ts';
import { type MCPServer, mcpServer, mcpServerInfo } from './mcpserver.ts';
import { type Project, project, projectInfo } from './project.ts';
import { type Provider, provider, providerInfo } from './provider.ts';
import { type SpendCap, spendCap, spendCapInfo } from './spendcap.ts';
import { type Workflow, workflow, workflowInfo } from './workflow.ts';

export * from './common.ts';

/** Every Switchyard kind with its schema and registration info, in dependency order. */
export const KINDS = [
  { info: projectInfo, schema: project, spec: project.shape.spec, status: project.shape.status },
  { info: providerInfo, schema: provider, spec: provider.shape.spec, status: provider.shape.status },
  { info: workflowInfo, schema: workflow, spec: workflow.shape.spec, status: workflow.shape.status },
  { info: apiKeyInfo, schema: apiKey, spec: apiKey.shape.spec, status: apiKey.shape.status },
  { info: spendCapInfo, schema: spendCap, spec: spendCap.shape.spec, status: spendCap.shape.status },
  { info: guardrailInfo, schema: guardrail, spec: guardrail.shape.spec, status: guardrail.shape.status },
  { info: mcpServerInfo, schema: mcpServer, spec: mcpServer.shape.spec, status: mcpServer.shape.status },
] as const satisfies readonly { info: KindInfo; schema: z.ZodType; spec: z.ZodType; status: z.ZodType }[];

export const switchyardObject = z.discriminatedUnion('kind', [
  project,
  provider,
  workflow,
  apiKey,
  spendCap,
  guardrail,
  mcpServer,
]);
export type SwitchyardObject = Project | Provider | Workflow | ApiKey | SpendCap | Guardrail | MCPServer;
export type SwitchyardKind = SwitchyardObject['kind'];

export type { ApiKey, Guardrail, MCPServer, Project, Provider, SpendCap, Workflow };
