/**
 * Generates crds/*.yaml from the zod schemas in operator/src/resources.
 *
 *   node operator/src/crd/generate.ts --write   regenerate crds/ (make crds)
 *   node operator/src/crd/generate.ts --check   exit 1 when crds/ drifted from the schemas (make check)
 */
import { relative } from 'node:path';
import { CRDS_DIR, diffCrds, writeCrds } from './files.ts';

const mode = process.argv[2];
const dirLabel = relative(process.cwd(), CRDS_DIR) || '.';

if (mode === '--write' && process.argv.length === 3) {
  for (const file of writeCrds()) console.log(`wrote ${dirLabel}/${file}`);
} else if (mode === '--check' && process.argv.length === 3) {
  const drift = diffCrds();
  if (drift.length === 0) {
    console.log(`${dirLabel}: CRDs match operator/src/resources`);
  } else {
    for (const d of drift) console.error(`${dirLabel}/${d.file}: ${d.problem} (${d.detail})`);
    console.error('CRDs are out of date with operator/src/resources; run `make crds` and commit crds/.');
    process.exitCode = 1;
  }
} else {
  console.error('usage: node operator/src/crd/generate.ts --write | --check');
  process.exitCode = 2;
}
