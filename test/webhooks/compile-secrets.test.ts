import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { compileSnapshot, loadConfigFolder } from '#operator';
import { webhookSecretProblem } from '#operator/compiler/webhooks';
import { asyncConfig, WEBHOOK_SECRET } from '../async/harness.ts';

async function compile(secretValue: string) {
  const manifests = asyncConfig({ webhooks: [{ url: 'https://hooks.example.com/a' }] }).map((m) =>
    (m as { kind: string; metadata: { name: string } }).kind === 'Secret' &&
    (m as { metadata: { name: string } }).metadata.name === 'hook-secret'
      ? { ...m, stringData: { s0: secretValue } }
      : m,
  );
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-whsec-'));
  try {
    await writeFile(join(dir, 'c.yaml'), manifests.map((m) => stringify(m)).join('---\n'));
    const loaded = await loadConfigFolder(dir);
    return compileSnapshot({
      objects: loaded.objects,
      secrets: loaded.secrets,
      now: new Date(),
      sealKey: randomBytes(32),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('webhook secrets in the compiler', () => {
  it('accepts whsec_ secrets and refuses other shapes and short keys', () => {
    expect(webhookSecretProblem(WEBHOOK_SECRET)).toBeUndefined();
    expect(webhookSecretProblem(`whsec_${randomBytes(32).toString('base64url')}`)).toBeUndefined();
    expect(webhookSecretProblem('plain-shared-secret')).toMatch(/whsec_/);
    expect(webhookSecretProblem('whsec_abc')).toMatch(/at least 16/);
    expect(webhookSecretProblem('whsec_not-base64!')).toMatch(/whsec_/);
    // A rotation: new and old, separated by white space; a third is refused.
    expect(webhookSecretProblem(`${WEBHOOK_SECRET} ${WEBHOOK_SECRET}`)).toBeUndefined();
    expect(webhookSecretProblem(`${WEBHOOK_SECRET} ${WEBHOOK_SECRET} ${WEBHOOK_SECRET}`)).toMatch(
      /at most two/,
    );
    expect(webhookSecretProblem(`${WEBHOOK_SECRET} whsec_abc`)).toMatch(/at least 16/);
  });

  it('seals a valid secret into the snapshot; an invalid one disables that webhook and flags the Project', async () => {
    const ok = await compile(WEBHOOK_SECRET);
    expect(ok.snapshot.projects['team.app']?.webhooks).toHaveLength(1);
    expect(JSON.stringify(ok.snapshot)).not.toContain(WEBHOOK_SECRET);
    const bad = await compile('hunter2');
    expect(bad.snapshot.projects['team.app']?.webhooks).toHaveLength(0);
    const verdict = bad.verdicts.find((v) => v.ref.kind === 'Project' && v.ref.name === 'app');
    expect(verdict?.ok).toBe(false);
    expect(verdict?.message).toMatch(
      /webhooks\[0\] \(https:\/\/hooks\.example\.com\/a\) is disabled: the secret must look like whsec_/,
    );
  });
});
