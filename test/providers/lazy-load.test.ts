/**
 * Pod memory: the AWS libraries (SigV4 signer, event-stream codec) are loaded only once a snapshot
 * has a Bedrock provider. A fresh Node process records every module it resolves.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const NODE = join(process.cwd(), 'node_modules/.bin/node');

describe('lazy loading of provider libraries', () => {
  it('a snapshot without a bedrock provider loads no @smithy module; one with it loads them when it is built', () => {
    const child = spawnSync(
      NODE,
      ['--expose-gc', '--disable-warning=ExperimentalWarning', 'test/providers/fixtures/lazy-load-child.ts'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const out = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
      withoutBedrock: string[];
      withBedrock: string[];
      heapWithoutKiB: number;
      heapBedrockKiB: number;
    };
    console.log(
      `without bedrock: ${out.withoutBedrock.length} @smithy modules, heap +${out.heapWithoutKiB} KiB; with bedrock: ${out.withBedrock.length} modules, heap +${out.heapBedrockKiB} KiB`,
    );
    expect(out.withoutBedrock).toEqual([]);
    expect(out.withBedrock).toEqual(
      expect.arrayContaining(['@smithy/signature-v4', '@smithy/core/event-streams']),
    );
  });
});
