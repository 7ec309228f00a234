import { createHash } from 'node:crypto';
import type { SnapshotWorkflow } from '#contract';
import { GatewayError } from '../errors/index.ts';
import type { ToolCall } from '../providers/types.ts';
import { isObjectSchema } from './common-schema.ts';
import type { NativeBody } from './native-schema.ts';
import { asRuleName, checkedToolName, isToolName } from './tool-name.ts';

/**
 * The tools of a Responses request as the providers take them: function tools. A `namespace` tool's
 * function and custom tools are offered flat, named `<namespace>__<name>` (or a hashed form of it
 * where that breaks the 64-character name rule or is taken by another tool); a `custom` (freeform)
 * tool is a function with one string parameter, `input`, its grammar in that parameter's
 * description. Hosted tools (any other type) are refused or omitted as the workflow's policy says.
 * ToolNames maps the provider-facing names back, so calls come back as the spec shapes them.
 */

/** A workflow's `hostedTools`, as the snapshot carries it. */
export type HostedToolPolicy = NonNullable<SnapshotWorkflow['hostedTools']>;
/** What a workflow that says nothing gets: every hosted tool refused. */
export const REFUSE_HOSTED: HostedToolPolicy = { default: 'refuse' };

/** A tool as the client named it. */
export interface ToolRef {
  namespace?: string | undefined;
  name: string;
  custom: boolean;
}

export class ToolNames {
  readonly #byFlat = new Map<string, ToolRef>();
  readonly #byRef = new Map<string, string>();

  add(flat: string, ref: ToolRef): void {
    this.#byFlat.set(flat, ref);
    this.#byRef.set(refKey(ref.namespace, ref.name), flat);
  }
  has(flat: string): boolean {
    return this.#byFlat.has(flat);
  }
  /** The client's tool behind a provider-facing name; a name it never offered is a plain function. */
  ref(flat: string): ToolRef {
    return this.#byFlat.get(flat) ?? { name: flat, custom: false };
  }
  /** The provider-facing name of a client's tool, offered in this request or not. */
  flat(namespace: string | undefined, name: string): string {
    return this.#byRef.get(refKey(namespace, name)) ?? (namespace ? flatName(namespace, name) : name);
  }
}

const refKey = (namespace: string | undefined, name: string): string => `${namespace ?? ''}\u0000${name}`;

/** `<namespace>__<name>` when that follows the name rule; otherwise a readable prefix and a hash. */
export function flatName(namespace: string, name: string, hashed = false): string {
  const plain = `${namespace}__${name}`;
  if (!hashed && isToolName(plain)) return plain;
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 8);
  return `${asRuleName(plain, 'tool').slice(0, 55)}_${hash}`;
}

type NativeTool = NonNullable<NativeBody['tools']>[number];

export interface ResponsesTools {
  tools: NativeTool[];
  names: ToolNames;
  /** The hosted tool types omitted by the policy, in request order, each once. */
  omitted: string[];
}

const INNER_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

function grammarText(format: unknown, param: string): string {
  if (format == null) return '';
  const f = format as { type?: unknown; syntax?: unknown; definition?: unknown };
  if (f.type === 'text') return '';
  if (f.type === 'grammar' && typeof f.definition === 'string' && typeof f.syntax === 'string')
    return ` It must follow this ${f.syntax} grammar:\n${f.definition}`;
  throw new GatewayError('invalid_request', 'Invalid custom tool: format must be text or grammar.', {
    param: `${param}.format`,
  });
}

function functionTool(flat: string, t: Record<string, unknown>, param: string): NativeTool {
  const { description, parameters, strict } = t;
  if (parameters != null && !isObjectSchema(parameters))
    throw new GatewayError(
      'invalid_request',
      'Invalid tool: parameters must be a JSON schema of type "object".',
      {
        param: `${param}.parameters`,
      },
    );
  return {
    type: 'function',
    function: {
      name: flat,
      ...(typeof description === 'string' ? { description } : {}),
      ...(parameters ? { parameters: parameters as Record<string, unknown> } : {}),
      ...(typeof strict === 'boolean' ? { strict } : {}),
    },
  };
}

function customTool(flat: string, t: Record<string, unknown>, param: string): NativeTool {
  const input = `The tool's whole input, as free text.${grammarText(t.format, param)}`;
  return {
    type: 'function',
    function: {
      name: flat,
      ...(typeof t.description === 'string' ? { description: t.description } : {}),
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: input } },
        required: ['input'],
        additionalProperties: false,
      },
    },
  };
}

function innerName(v: unknown, param: string): string {
  if (typeof v === 'string' && INNER_NAME.test(v)) return v;
  throw new GatewayError('invalid_request', 'Invalid tool: names are 1-128 letters, digits, _ or -.', {
    param,
  });
}

/** The tools of a Responses request, after the workflow's policy for hosted tools. */
export function responsesTools(
  raw: readonly unknown[] | null | undefined,
  policy: HostedToolPolicy,
): ResponsesTools {
  const names = new ToolNames();
  const omitted: string[] = [];
  const out: NativeTool[] = [];
  const list = raw ?? [];
  const objects = list.map((t, i) => {
    if (!t || typeof t !== 'object' || Array.isArray(t))
      throw new GatewayError('invalid_request', 'Invalid tool: each tool is an object.', {
        param: `tools[${i}]`,
      });
    return t as Record<string, unknown>;
  });
  // Top-level names first: a namespaced tool whose flat name one of them holds is hashed instead.
  const topLevel = new Set<string>();
  objects.forEach((t, i) => {
    if (t.type === 'function' || t.type === 'custom')
      topLevel.add(checkedToolName(t.name, `tools[${i}].name`));
  });
  objects.forEach((t, i) => {
    const param = `tools[${i}]`;
    const type = t.type;
    if (type === 'function' || type === 'custom') {
      const name = t.name as string;
      if (names.has(name))
        throw new GatewayError('invalid_request', `Invalid tool: the name "${name}" is used twice.`, {
          param: `${param}.name`,
        });
      names.add(name, { name, custom: type === 'custom' });
      out.push(type === 'custom' ? customTool(name, t, param) : functionTool(name, t, param));
      return;
    }
    if (type === 'namespace') {
      const ns = innerName(t.name, `${param}.name`);
      if (!Array.isArray(t.tools) || t.tools.length === 0)
        throw new GatewayError(
          'invalid_request',
          'Invalid namespace tool: tools must be a non-empty array.',
          {
            param: `${param}.tools`,
          },
        );
      (t.tools as unknown[]).forEach((inner, j) => {
        const p = `${param}.tools[${j}]`;
        const it = (inner && typeof inner === 'object' ? inner : {}) as Record<string, unknown>;
        if (it.type !== 'function' && it.type !== 'custom')
          throw new GatewayError(
            'invalid_request',
            `Invalid namespace tool: it holds function and custom tools, not "${String(it.type)}".`,
            { param: `${p}.type` },
          );
        const name = innerName(it.name, `${p}.name`);
        let flat = flatName(ns, name);
        if (topLevel.has(flat) || names.has(flat)) flat = flatName(ns, name, true);
        if (names.has(flat))
          throw new GatewayError('invalid_request', `Invalid namespace tool: "${name}" is listed twice.`, {
            param: `${p}.name`,
          });
        names.add(flat, { namespace: ns, name, custom: it.type === 'custom' });
        out.push(it.type === 'custom' ? customTool(flat, it, p) : functionTool(flat, it, p));
      });
      return;
    }
    // A tool without a type is malformed, not a hosted tool a policy could omit.
    if (typeof type !== 'string' || !/^[a-z0-9_]{1,64}$/.test(type))
      throw new GatewayError(
        'invalid_request',
        'Invalid tool: type must be a tool type such as "function".',
        {
          param: `${param}.type`,
        },
      );
    const hosted = type;
    const action = policy.tools?.[hosted] ?? policy.default;
    if (action === 'omit') {
      if (!omitted.includes(hosted)) omitted.push(hosted);
      return;
    }
    throw new GatewayError(
      'unsupported_parameter',
      `The tool type "${hosted}" is not supported by this workflow: its hostedTools policy refuses it; send function, custom or namespace tools.`,
      { param: `${param}.type` },
    );
  });
  return { tools: out, names, omitted };
}

/** A custom tool's input as the provider's function arguments, and back. */
export const customArguments = (input: string): string => JSON.stringify({ input });
export function customInput(args: string): string {
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as { input?: unknown }).input === 'string')
      return (parsed as { input: string }).input;
  } catch {
    // Arguments that are not the one-field object are the input as the model wrote it.
  }
  return args;
}

/** A function_call or custom_tool_call item (input or output) as the provider's tool call. */
export function callOfItem(item: Record<string, unknown>, names: ToolNames): ToolCall | undefined {
  const namespace = typeof item.namespace === 'string' ? item.namespace : undefined;
  if (item.type === 'function_call')
    return {
      id: String(item.call_id),
      type: 'function',
      function: { name: names.flat(namespace, String(item.name)), arguments: String(item.arguments) },
    };
  if (item.type === 'custom_tool_call')
    return {
      id: String(item.call_id),
      type: 'function',
      function: {
        name: names.flat(namespace, String(item.name)),
        arguments: customArguments(String(item.input)),
      },
    };
  return undefined;
}
