import { describe, expect, it } from 'vitest';
import { sampleFromSchema } from '#gateway/structured/sample';

describe('sampleFromSchema', () => {
  it('is deterministic per seed', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, n: { type: 'number' } } };
    expect(sampleFromSchema(schema, 's1')).toEqual(sampleFromSchema(schema, 's1'));
    expect(sampleFromSchema(schema, 's1')).not.toEqual(sampleFromSchema(schema, 's2'));
  });

  it('produces every primitive type', () => {
    expect(typeof sampleFromSchema({ type: 'string' })).toBe('string');
    expect(typeof sampleFromSchema({ type: 'number' })).toBe('number');
    expect(Number.isInteger(sampleFromSchema({ type: 'integer' }))).toBe(true);
    expect(typeof sampleFromSchema({ type: 'boolean' })).toBe('boolean');
    expect(sampleFromSchema({ type: 'null' })).toBeNull();
    expect(typeof sampleFromSchema({ type: 'STRING' })).toBe('string'); // Gemini/OpenAPI spelling
  });

  it('honours enum, const and nullable type arrays', () => {
    expect(sampleFromSchema({ enum: ['red', 'green'] })).toBe('red');
    expect(sampleFromSchema({ const: 42 })).toBe(42);
    expect(typeof sampleFromSchema({ type: ['null', 'string'] })).toBe('string');
    expect(sampleFromSchema({ type: ['null'] })).toBeNull();
  });

  it('fills properties, required ones included even without a schema', () => {
    const value = sampleFromSchema({
      type: 'object',
      properties: {
        name: { type: 'string' },
        nested: { type: 'object', properties: { ok: { type: 'boolean' } } },
      },
      required: ['name', 'extra'],
      additionalProperties: false,
    }) as Record<string, unknown>;
    expect(Object.keys(value).sort()).toEqual(['extra', 'name', 'nested']);
    expect(typeof (value.nested as { ok: unknown }).ok).toBe('boolean');
  });

  it('respects array bounds and tuple items', () => {
    expect(sampleFromSchema({ type: 'array', items: { type: 'integer' }, minItems: 3 })).toHaveLength(3);
    expect(sampleFromSchema({ type: 'array', items: { type: 'integer' }, maxItems: 0 })).toEqual([]);
    expect(sampleFromSchema({ type: 'array', items: { type: 'string' } })).toHaveLength(1);
    const tuple = sampleFromSchema({
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'number' }],
    }) as unknown[];
    expect([typeof tuple[0], typeof tuple[1]]).toEqual(['string', 'number']);
  });

  it('respects numeric and string bounds', () => {
    expect(sampleFromSchema({ type: 'integer', minimum: 10, maximum: 20 })).toBe(15);
    expect(sampleFromSchema({ type: 'number', minimum: 5 })).toBe(5);
    expect(sampleFromSchema({ type: 'integer', maximum: -3 })).toBe(-3);
    expect(sampleFromSchema({ type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 2 })).toBe(1);
    expect(
      sampleFromSchema({ type: 'integer', minimum: 1, maximum: 100, multipleOf: 7 }) as number,
    ).toSatisfy((n: number) => n % 7 === 0 && n >= 1 && n <= 100);
    expect((sampleFromSchema({ type: 'string', minLength: 30 }) as string).length).toBeGreaterThanOrEqual(30);
    expect((sampleFromSchema({ type: 'string', maxLength: 3 }) as string).length).toBeLessThanOrEqual(3);
  });

  it('formats date-time, date, email and uuid', () => {
    const dt = sampleFromSchema({ type: 'string', format: 'date-time' }) as string;
    expect(new Date(dt).toISOString().startsWith(dt.slice(0, 19))).toBe(true);
    expect(sampleFromSchema({ type: 'string', format: 'date' })).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sampleFromSchema({ type: 'string', format: 'email' })).toMatch(/^[^@\s]+@[^@\s]+\.[a-z]+$/);
    expect(sampleFromSchema({ type: 'string', format: 'uuid' })).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('takes the first non-null anyOf/oneOf branch and merges allOf', () => {
    expect(typeof sampleFromSchema({ anyOf: [{ type: 'integer' }, { type: 'string' }] })).toBe('number');
    expect(typeof sampleFromSchema({ anyOf: [{ type: 'null' }, { type: 'string' }] })).toBe('string');
    expect(typeof sampleFromSchema({ oneOf: [{ type: 'boolean' }] })).toBe('boolean');
    const merged = sampleFromSchema({
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'integer' } } },
      ],
    });
    expect(merged).toEqual({ a: expect.any(String), b: expect.any(Number) });
  });

  it('resolves $ref into $defs and definitions, and terminates on recursion', () => {
    const value = sampleFromSchema({
      type: 'object',
      properties: { owner: { $ref: '#/$defs/person' }, legacy: { $ref: '#/definitions/id' } },
      $defs: {
        person: {
          type: 'object',
          properties: { email: { type: 'string', format: 'email' } },
          required: ['email'],
        },
      },
      definitions: { id: { type: 'integer', minimum: 7 } },
    }) as { owner: { email: string }; legacy: number };
    expect(value.owner.email).toContain('@');
    expect(value.legacy).toBe(7);

    const tree = {
      $ref: '#/$defs/node',
      $defs: {
        node: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
          required: ['name'],
        },
      },
    };
    const sampled = sampleFromSchema(tree) as { name: string; children: unknown[] };
    expect(typeof sampled.name).toBe('string');
    expect(JSON.stringify(sampled).length).toBeLessThan(10_000);
  });

  it('treats empty and boolean schemas as anything (null)', () => {
    expect(sampleFromSchema({})).toBeNull();
    expect(sampleFromSchema(true)).toBeNull();
  });
});
