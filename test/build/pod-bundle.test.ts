/**
 * What goes into each pod's bundle (scripts/pod-bundle.ts), bundled from the sources as
 * `make build` bundles the compiled modules: of @kubernetes/client-node, only the kubeconfig and its
 * authentication, not the generated API classes and models its index re-exports (~850 modules,
 * 2.4 MB of the operator's bundle).
 */
import { join } from 'node:path';
import { build } from 'rolldown';
import { describe, expect, it } from 'vitest';
import { podBundle } from '../../scripts/pod-bundle.ts';

const ROOT = join(import.meta.dirname, '../..');

async function bundled(input: string) {
  const options = podBundle(join(ROOT, input), join(ROOT, '.cache/unused'));
  const { output } = await build({ ...options, logLevel: 'silent', write: false });
  const chunks = output.flatMap((o) => (o.type === 'chunk' ? [o] : []));
  const modules = chunks.flatMap((c) => Object.keys(c.modules));
  const entry = chunks.find((c) => c.isEntry)!;
  return { modules, entryBytes: entry.code.length, chunks: chunks.length };
}

describe('pod bundles', () => {
  for (const pod of ['operator', 'gateway'])
    it(`the ${pod}'s keeps client-node's kubeconfig and leaves out its generated APIs and models`, async () => {
      const b = await bundled(`${pod}/src/main.ts`);
      const kube = b.modules.filter((m) => m.includes('/@kubernetes/client-node/'));
      const generated = kube.filter((m) => /\/gen\/(models|apis)\//.test(m));
      console.log(
        `${pod}: ${b.modules.length} modules in ${b.chunks} chunks, entry ${(b.entryBytes / 1024).toFixed(0)} KB; client-node modules ${kube.length}, generated ${generated.length}`,
      );
      expect(kube.some((m) => m.endsWith('/dist/config.js'))).toBe(true);
      expect(generated).toEqual([]);
      expect(kube.length).toBeLessThan(30);
    });
});
