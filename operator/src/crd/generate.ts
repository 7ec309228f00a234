/**
 * Generates crds/*.yaml and their chart copy (charts/switchyard-crds/templates/crds/) from the zod
 * schemas in operator/src/resources.
 *
 *   node operator/src/crd/generate.ts --write   regenerate both (make crds)
 *   node operator/src/crd/generate.ts --check   exit 1 when either drifted from the schemas (make check)
 */
import { relative } from 'node:path';
import { crdTargets, diffCrds, writeCrds } from './files.ts';

const mode = process.argv[2];
const label = (dir: string) => relative(process.cwd(), dir) || '.';

if (mode === '--write' && process.argv.length === 3) {
  for (const { dir, files } of crdTargets())
    for (const file of writeCrds(dir, files)) console.log(`wrote ${label(dir)}/${file}`);
} else if (mode === '--check' && process.argv.length === 3) {
  let drifted = false;
  for (const { dir, files } of crdTargets()) {
    const drift = diffCrds(dir, files);
    if (drift.length === 0) {
      console.log(`${label(dir)}: CRDs match operator/src/resources`);
      continue;
    }
    drifted = true;
    for (const d of drift) console.error(`${label(dir)}/${d.file}: ${d.problem} (${d.detail})`);
  }
  if (drifted) {
    console.error(
      'CRDs are out of date with operator/src/resources; run `make crds` and commit crds/ and charts/switchyard-crds/.',
    );
    process.exitCode = 1;
  }
} else {
  console.error('usage: node operator/src/crd/generate.ts --write | --check');
  process.exitCode = 2;
}
