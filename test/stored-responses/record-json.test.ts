import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordJson } from '../../gateway/src/stored-responses/redis-store.ts';
import { type StoredResponse, storedResponse } from '../../gateway/src/stored-responses/types.ts';

const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const obj = fc.dictionary(fc.string(), json);
const record: fc.Arbitrary<StoredResponse> = fc.record(
  {
    id: fc.string(),
    workflow: fc.string(),
    response: obj,
    items: fc.array(obj, { maxLength: 3 }),
    conversation: fc.array(obj, { maxLength: 3 }),
    sessionId: fc.string(),
  },
  { requiredKeys: ['id', 'workflow', 'response', 'items', 'conversation'] },
);

describe('a stored record spliced around the answer’s own JSON', () => {
  it('reads back as the record serialized whole', () => {
    fc.assert(
      fc.property(record, (r) => {
        const spliced = JSON.parse(recordJson(r, JSON.stringify(r.response)));
        expect(spliced).toEqual(JSON.parse(JSON.stringify(r)));
        expect(storedResponse.parse(spliced)).toEqual(storedResponse.parse(JSON.parse(JSON.stringify(r))));
      }),
    );
  });

  it('serializes the record whole without the answer’s JSON', () => {
    const r: StoredResponse = {
      id: 'resp_1',
      workflow: 'w',
      response: { a: 1 },
      items: [],
      conversation: [],
    };
    expect(recordJson(r)).toBe(JSON.stringify(r));
  });
});
