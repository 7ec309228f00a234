import { GatewayError } from '../errors/index.ts';
import type { StructuredOutput } from '../providers/types.ts';
import { asRuleName } from './tool-name.ts';

export type StructuredChoice =
  | { kind: 'schema'; output: StructuredOutput }
  | { kind: 'json' }
  | { kind: 'none' };

const SCHEMA_KEYS = ['type', 'properties', '$schema', 'anyOf', 'oneOf', 'allOf', '$ref', 'enum', 'items'];
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Which structured output applies: the request's `response_format` (a JSON schema, or OpenAI's
 * `{type: json_schema | json_object | text}`; json_object and text give way to the workflow's schema),
 * else the workflow's schema, else
 * `structured_output_schema` (the way to ask for one without a workflow).
 */
export function resolveStructured(
  responseFormat: unknown,
  workflowSchema: Record<string, unknown> | undefined,
  directSchema: Record<string, unknown> | undefined,
  name: string,
): StructuredChoice {
  if (isObject(responseFormat)) {
    const t = responseFormat.type;
    if (t === 'json_schema') {
      const js = responseFormat.json_schema;
      if (!isObject(js) || !isObject(js.schema))
        throw new GatewayError(
          'invalid_request',
          'response_format.json_schema.schema must be a JSON schema object.',
          {
            param: 'response_format',
          },
        );
      const strict = typeof js.strict === 'boolean' ? js.strict : undefined;
      return {
        kind: 'schema',
        output: {
          name: typeof js.name === 'string' ? js.name : name,
          schema: js.schema,
          ...(strict !== undefined ? { strict } : {}),
        },
      };
    }
    // A workflow's schema governs on every surface: clients that ask for plain JSON get the schema's
    // JSON (the Vercel AI SDK's openai-compatible provider sends json_object by default).
    if (t === 'json_object')
      return workflowSchema ? { kind: 'schema', output: { name, schema: workflowSchema } } : { kind: 'json' };
    if (t === 'text')
      return workflowSchema ? { kind: 'schema', output: { name, schema: workflowSchema } } : { kind: 'none' };
    if (SCHEMA_KEYS.some((k) => k in responseFormat))
      return { kind: 'schema', output: { name, schema: responseFormat } };
    throw new GatewayError(
      'invalid_request',
      'response_format must be a JSON schema or {type: "json_schema", json_schema: {...}}.',
      {
        param: 'response_format',
      },
    );
  }
  if (workflowSchema) return { kind: 'schema', output: { name, schema: workflowSchema } };
  if (directSchema) return { kind: 'schema', output: { name, schema: directSchema } };
  return { kind: 'none' };
}

/** A structured-output schema's name as sent upstream: the workflow's, under the tool-name rule. */
export const schemaName = (workflow: string): string => asRuleName(workflow, 'output');
