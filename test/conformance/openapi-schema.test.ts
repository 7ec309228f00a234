/** The OpenAPI-to-JSON-Schema conversion the conformance suite validates with. */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { loadOpenApiCopy, toJsonSchema } from './openapi-schema.ts';

const check = (schema: unknown, value: unknown) =>
  new Ajv2020({ strict: false }).validate(toJsonSchema(schema) as object, value);

describe('toJsonSchema', () => {
  it('nullable admits null beside the type, inside an enum too, and around a bare $ref or union', () => {
    expect(toJsonSchema({ type: 'string', nullable: true })).toEqual({ type: ['string', 'null'] });
    expect(check({ type: 'string', enum: ['a'], nullable: true }, null)).toBe(true);
    expect(check({ type: 'string', enum: ['a'], nullable: true }, 'b')).toBe(false);
    expect(toJsonSchema({ $ref: '#/x', nullable: true })).toEqual({
      anyOf: [{ $ref: '#/x' }, { type: 'null' }],
    });
    expect(check({ type: 'string' }, null)).toBe(false);
  });

  it('drops discriminator and extensions but keeps properties named like them', () => {
    expect(
      toJsonSchema({
        anyOf: [{ type: 'object' }],
        discriminator: { propertyName: 'type' },
        'x-oaiMeta': {},
        example: 1,
        properties: { example: { type: 'string', 'x-stainless': 1 }, discriminator: { type: 'integer' } },
      }),
    ).toEqual({
      anyOf: [{ type: 'object' }],
      properties: { example: { type: 'string' }, discriminator: { type: 'integer' } },
    });
  });

  it('the pinned copy compiles and names a schema for every Responses stream event type', () => {
    const copy = loadOpenApiCopy();
    expect(copy.responseEventSchemas.get('response.content_part.added')).toBe(
      'ResponseContentPartAddedEvent',
    );
    expect(copy.responseEventSchemas.get('error')).toBe('ResponseErrorEvent');
    const usage = copy.validator('ResponseUsage');
    const base = {
      input_tokens: 1,
      output_tokens: 1,
      total_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
    };
    expect(usage({ ...base, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } })).toBe(true);
    expect(usage({ ...base, input_tokens_details: { cached_tokens: 0 } })).toBe(false);
  });
});
