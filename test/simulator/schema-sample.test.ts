import { describe, expect, it } from 'vitest';
import { fakeFromSchema } from './schema-sample.ts';
import { schemaErrors } from './test-helpers.ts';

// The simulator's fake structured answers, checked by Ajv (not by the gateway's validator).
const INVOICE = {
  type: 'object',
  additionalProperties: false,
  required: ['invoice_number', 'total', 'currency', 'line_items'],
  properties: {
    invoice_number: { type: 'string', pattern: '^INV-[0-9]{4}$' },
    total: { type: 'number', minimum: 0 },
    currency: { type: 'string', enum: ['USD', 'EUR', 'GBP'] },
    due_date: { type: 'string', format: 'date-time' },
    contact: { type: 'string', format: 'email' },
    line_items: {
      type: 'array',
      minItems: 1,
      maxItems: 5,
      items: {
        type: 'object',
        required: ['description', 'amount'],
        properties: { description: { type: 'string', minLength: 3 }, amount: { type: 'integer' } },
      },
    },
  },
};

const TREE = {
  $defs: {
    node: {
      type: 'object',
      properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
      required: ['label'],
    },
  },
  $ref: '#/$defs/node',
};

const UNION = {
  type: 'object',
  properties: {
    v: { anyOf: [{ type: 'integer', minimum: 2000000, maximum: 2000010 }, { type: 'null' }] },
    w: { type: ['string', 'null'], maxLength: 4 },
    big: { type: 'integer', minimum: 1e6 },
    small: { type: 'number', exclusiveMaximum: -5000 },
  },
  required: ['v', 'w', 'big', 'small'],
};

describe('fakeFromSchema (the simulator generator)', () => {
  it.each([
    ['invoice with pattern, enum, formats', INVOICE],
    ['recursive $ref', TREE],
    ['unions and one-sided bounds', UNION],
  ])('conforms: %s, for many seeds', (_name, schema) => {
    for (let i = 0; i < 40; i++)
      expect(schemaErrors(schema, fakeFromSchema(schema, `seed-${i}`))).toEqual([]);
  });

  it('is deterministic per seed and varies across seeds', () => {
    expect(fakeFromSchema(INVOICE, 'a')).toEqual(fakeFromSchema(INVOICE, 'a'));
    const distinct = new Set(
      Array.from({ length: 10 }, (_, i) => JSON.stringify(fakeFromSchema(INVOICE, `s${i}`))),
    );
    expect(distinct.size).toBeGreaterThan(5);
  });

  it("reads Gemini's OpenAPI dialect", () => {
    const gemini = {
      type: 'OBJECT',
      properties: {
        title: { type: 'STRING' },
        year: { type: 'INTEGER', minimum: '1900', maximum: '2100' },
        note: { type: 'STRING', nullable: true },
        tags: { type: 'ARRAY', minItems: '2', maxItems: '2', items: { type: 'STRING' } },
      },
      required: ['title', 'year', 'note', 'tags'],
      propertyOrdering: ['title', 'year'],
    };
    const plain = {
      type: 'object',
      properties: {
        title: { type: 'string' },
        year: { type: 'integer', minimum: 1900, maximum: 2100 },
        note: { type: ['string', 'null'] },
        tags: { type: 'array', minItems: 2, maxItems: 2, items: { type: 'string' } },
      },
      required: ['title', 'year', 'note', 'tags'],
    };
    for (let i = 0; i < 20; i++) expect(schemaErrors(plain, fakeFromSchema(gemini, `g${i}`))).toEqual([]);
  });

  it('a property named like a keyword is a property, not a keyword', () => {
    const schema = {
      type: 'object',
      properties: { type: { type: 'integer' }, properties: { type: 'string' } },
      required: ['type', 'properties'],
    };
    expect(schemaErrors(schema, fakeFromSchema(schema, 'k'))).toEqual([]);
  });

  it('hostile sizes finish quickly (cut short rather than stall)', () => {
    const hostile = [
      { type: 'array', minItems: 1e9, items: { type: 'string' } },
      { type: 'object', properties: { s: { type: 'string', minLength: 1e9 } }, required: ['s'] },
      {
        type: 'array',
        minItems: 1000,
        items: {
          type: 'array',
          minItems: 1000,
          items: { type: 'array', minItems: 1000, items: { type: 'integer' } },
        },
      },
    ];
    for (const schema of hostile) {
      const started = performance.now();
      const out = JSON.stringify(fakeFromSchema(schema, 'h'));
      expect(performance.now() - started).toBeLessThan(2000);
      expect(out.length).toBeLessThan(2_000_000);
    }
  });
});
