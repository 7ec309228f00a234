import { z } from 'zod';
import { MCP } from '#contract';
import {
  ageColumn,
  cel,
  celList,
  conditions,
  type KindInfo,
  localRef,
  objectMeta,
  observedGeneration,
  readyColumn,
  reasonColumn,
  secretKeyRef,
  usd,
} from './common.ts';

/** Characters the MCP spec allows in a tool name; prefixes and globs stay within them. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** A prefix: tool-name characters, no separator inside (the gateway splits prefixed names at it). */
export const TOOL_PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
/** A glob over tool names: tool-name characters and `*` (any run of characters, none included). */
export const TOOL_GLOB = /^[A-Za-z0-9_.*-]{1,160}$/;

export const ONE_MCP_CREDENTIAL = 'credentials must name exactly one of bearer or header';
export const PREFIX_SEPARATOR = `toolPrefix must not contain "${MCP.separator}", the separator between prefix and tool`;
const FORBIDDEN_HEADERS = ['host', 'content-length', 'content-type', 'accept', 'mcp-session-id'];
const FORBIDDEN_HEADER = `headerName must not be one the gateway sets itself (${FORBIDDEN_HEADERS.join(', ')}, mcp-*)`;

const timeoutMs = (what: string) =>
  z
    .number()
    .int()
    .min(1)
    .max(MCP.maxTimeoutMs)
    .meta({ description: `${what} in milliseconds, at most ${MCP.maxTimeoutMs}.` });

const toolGlob = (what: string) =>
  z
    .string()
    .regex(TOOL_GLOB, 'must be a tool name pattern: letters, digits, _ . - and * only')
    .meta({ description: `${what} Letters, digits, _ . - and * (any run of characters).` });

export const mcpCredentials = z
  .object({
    bearer: z
      .object({ secretRef: secretKeyRef('bearer token (sent as Authorization: Bearer <token>)', 'token') })
      .optional()
      .meta({ description: 'Send the Secret value as `Authorization: Bearer <value>`.' }),
    header: z
      .object({
        headerName: z
          .string()
          .min(1)
          .max(128)
          .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name')
          .meta({ description: 'Name of the header, e.g. X-Api-Key.' }),
        secretRef: secretKeyRef('header value', 'value'),
      })
      .optional()
      .meta({ description: 'Send the Secret value as a static header of the given name.' }),
  })
  .meta({
    description:
      "What the gateway sends to the server on every request; exactly one of the fields. Never the caller's own token, which the MCP specification forbids passing through.",
    ...cel(
      { rule: '[has(self.bearer), has(self.header)].exists_one(x, x)', message: ONE_MCP_CREDENTIAL },
      {
        rule: `!has(self.header) || !(self.header.headerName.lowerAscii() in ${celList(FORBIDDEN_HEADERS)} || self.header.headerName.lowerAscii().startsWith('mcp-'))`,
        message: FORBIDDEN_HEADER,
        fieldPath: '.header.headerName',
      },
    ),
  })
  .superRefine((c, ctx) => {
    if (Number(c.bearer !== undefined) + Number(c.header !== undefined) !== 1)
      ctx.addIssue({ code: 'custom', message: ONE_MCP_CREDENTIAL });
    const name = c.header?.headerName.toLowerCase();
    if (name && (FORBIDDEN_HEADERS.includes(name) || name.startsWith('mcp-')))
      ctx.addIssue({ code: 'custom', path: ['header', 'headerName'], message: FORBIDDEN_HEADER });
  });

export const mcpTool = z
  .object({
    name: z
      .string()
      .regex(TOOL_NAME, 'must be a tool name: 1-128 letters, digits, _ . -')
      .meta({ description: "The tool's name on the server, without the prefix." }),
    priceUsd: usd(
      "Price of one call, counted toward the project's and the key's spend caps. Unset: free.",
    ).optional(),
    timeoutMs: timeoutMs('Deadline of one call of this tool (overrides spec.timeoutMs),').optional(),
  })
  .meta({ description: 'Settings of one tool.' });

export const mcpServerSpec = z
  .object({
    projectRef: localRef('Project'),
    url: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/, 'must be an http(s) URL')
      .meta({
        description:
          "The server's Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp. Connections go through the SSRF guard: private, loopback and link-local addresses need allowPrivateNetworks here or on the Project (outboundFetch).",
        format: 'uri',
      }),
    allowPrivateNetworks: z.boolean().default(false).meta({
      description:
        "Let the gateway reach this server on a private, loopback or link-local address (an in-cluster Service, a sidecar), for this server only; the Project's outboundFetch.allowPrivateNetworks stays as it is for everything else. Default false.",
    }),
    credentials: mcpCredentials.optional(),
    toolPrefix: z
      .string()
      .regex(TOOL_PREFIX, 'must be 1-32 letters, digits, _ . - starting with a letter or digit')
      .optional()
      .meta({
        description: `Prepended to the server's tool, resource and prompt names as <toolPrefix>${MCP.separator}<name>, so names from different servers never collide. Unique within the project; defaults to metadata.name (which must then fit the same rule).`,
        ...cel({ rule: `!self.contains('${MCP.separator}')`, message: PREFIX_SEPARATOR }),
      }),
    allowTools: z.array(toolGlob('A tool name pattern.')).max(256).optional().meta({
      description:
        'Only tools whose unprefixed name matches one of these patterns are offered. Unset: every tool.',
      'x-kubernetes-list-type': 'set',
    }),
    denyTools: z.array(toolGlob('A tool name pattern.')).max(256).default([]).meta({
      description:
        'Tools whose unprefixed name matches one of these patterns are never offered; wins over allowTools.',
      'x-kubernetes-list-type': 'set',
    }),
    tools: z
      .array(mcpTool)
      .max(1024)
      .default([])
      .meta({
        description: 'Per-tool price and timeout, by unprefixed tool name. Tools not listed are free.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    timeoutMs: timeoutMs('Deadline of one request to the server,')
      .default(MCP.defaultTimeoutMs)
      .meta({
        description: `Deadline of one request to the server in milliseconds, at most ${MCP.maxTimeoutMs}. Default ${MCP.defaultTimeoutMs}.`,
      }),
    callsPerMinute: z.number().int().min(1).max(10_000_000).optional().meta({
      description:
        'Most tool calls per minute to this server, shared by every gateway pod; over it calls get a rate-limit error. Unset: no limit.',
    }),
  })
  .meta({
    description:
      'A remote MCP server (Streamable HTTP) whose tools, resources and prompts the project serves at /v1/mcp.',
  })
  .superRefine((spec, ctx) => {
    if (spec.toolPrefix?.includes(MCP.separator))
      ctx.addIssue({ code: 'custom', path: ['toolPrefix'], message: PREFIX_SEPARATOR });
  });

export const mcpServerStatus = z
  .object({
    projectId: z.string().optional().meta({ description: 'Id of the owning project in the snapshot.' }),
    toolPrefix: z.string().optional().meta({ description: 'The prefix in effect (spec or metadata.name).' }),
    protocolVersion: z.string().max(64).optional().meta({
      description: 'MCP protocol revision the server agreed to at the last probe, e.g. 2025-11-25.',
    }),
    serverName: z
      .string()
      .max(256)
      .optional()
      .meta({ description: 'Name and version the server reported at the last probe.' }),
    toolCount: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Tools the server listed at the last probe, before allowTools and denyTools.' }),
    offeredToolCount: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Tools the project offers from this server after allowTools and denyTools.' }),
    catalogueHash: z.string().max(64).optional().meta({
      description:
        "SHA-256 (hex) of the server's tool list (names, descriptions, schemas) at the last probe; changes when the catalogue does.",
    }),
    lastProbeTime: z.string().optional().meta({
      description:
        'When a probe first found what this status says (RFC 3339). Probes that find the same leave the status alone.',
      format: 'date-time',
    }),
    observedGeneration: observedGeneration.optional(),
    conditions: conditions.optional(),
  })
  .meta({
    description:
      'Observed state: Ready (part of the published snapshot) and Reachable (the last probe reached the server and listed its tools).',
  });

export const mcpServer = z.object({
  apiVersion: z.literal('switchyard.dev/v1alpha1'),
  kind: z.literal('MCPServer'),
  metadata: objectMeta,
  spec: mcpServerSpec,
  status: mcpServerStatus.optional(),
});
export type MCPServer = z.infer<typeof mcpServer>;

export const mcpServerInfo: KindInfo = {
  kind: 'MCPServer',
  plural: 'mcpservers',
  singular: 'mcpserver',
  shortNames: ['symcp'],
  categories: ['switchyard'],
  description: 'A remote MCP server whose tools a project serves at /v1/mcp.',
  printerColumns: [
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name', description: 'Owning project.' },
    { name: 'URL', type: 'string', jsonPath: '.spec.url', description: 'Streamable HTTP endpoint.' },
    { name: 'Prefix', type: 'string', jsonPath: '.status.toolPrefix', description: 'Tool name prefix.' },
    {
      name: 'Tools',
      type: 'integer',
      jsonPath: '.status.toolCount',
      description: 'Tools listed at the last probe.',
    },
    {
      name: 'Protocol',
      type: 'string',
      jsonPath: '.status.protocolVersion',
      description: 'MCP protocol revision at the last probe.',
      priority: 1,
    },
    {
      name: 'Reachable',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="Reachable")].status',
      description: 'Whether the last probe reached the server.',
    },
    readyColumn,
    reasonColumn,
    ageColumn,
  ],
};
