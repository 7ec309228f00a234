import { stringify } from 'yaml';
import { GROUP, KINDS, VERSION } from '../resources/index.ts';
import type { CustomResourceDefinition, JSONSchemaProps, KindEntry } from './crd-types.ts';
import { orderKeys } from './schema-keywords.ts';
import { toStructuralSchema, zodToJsonSchema } from './structural-schema.ts';

/**
 * Builds the apiextensions.k8s.io/v1 CustomResourceDefinitions of the Switchyard kinds from the zod
 * schemas in operator/src/resources, which stay the single source of truth; each spec and status
 * becomes a structural schema (structural-schema.ts).
 */

export const CRD_HEADER =
  '# Generated from operator/src/resources by `make crds`; do not edit.\n' +
  '# `make check` (operator/src/crd/generate.ts --check) fails when this file drifts from the zod schemas.\n';

const API_VERSION_DESCRIPTION =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DESCRIPTION =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** Builds the CustomResourceDefinition of one kind. Pure: same input, same object. */
export function buildCrd(kind: KindEntry): CustomResourceDefinition {
  const { info } = kind;
  const whole = zodToJsonSchema(kind.schema);
  const rootRequired = Array.isArray(whole['required']) ? whole['required'].map(String) : [];
  const spec = toStructuralSchema(kind.spec, 'spec');
  const status = toStructuralSchema(kind.status, 'status');
  // The root-level `required` comes from the whole object: Project's spec has a default, so the
  // API server fills it in and it must not be required.
  const required = ['spec', 'status'].filter((k) => rootRequired.includes(k));
  const openAPIV3Schema: JSONSchemaProps = orderKeys({
    description: info.description,
    type: 'object',
    properties: {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
      kind: { description: KIND_DESCRIPTION, type: 'string' },
      // The API server forbids anything but `type: object` here (even a description).
      metadata: { type: 'object' },
      spec,
      status,
    },
    ...(required.length > 0 ? { required } : {}),
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${info.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'switchyard' },
    },
    spec: {
      group: GROUP,
      names: {
        kind: info.kind,
        listKind: `${info.kind}List`,
        plural: info.plural,
        singular: info.singular,
        shortNames: [...info.shortNames],
        categories: [...info.categories],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: info.printerColumns.map((c) => ({
            name: c.name,
            type: c.type,
            jsonPath: c.jsonPath,
            description: c.description,
            ...(c.priority !== undefined ? { priority: c.priority } : {}),
          })),
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}

/** The CRDs of every kind, in KINDS order. */
export function buildAllCrds(kinds: readonly KindEntry[] = KINDS): CustomResourceDefinition[] {
  return kinds.map(buildCrd);
}

/** File name of a CRD inside crds/. */
export const crdFileName = (crd: CustomResourceDefinition): string => `${crd.metadata.name}.yaml`;

/**
 * Renders a CRD as YAML. YAML 1.1 quoting keeps strings such as "on" or "yes" strings for the
 * Go (sigs.k8s.io/yaml) readers; no line folding and no anchors, so diffs stay readable.
 */
export function renderCrd(crd: CustomResourceDefinition): string {
  return CRD_HEADER + stringify(crd, { version: '1.1', lineWidth: 0, aliasDuplicateObjects: false });
}

/** Every generated file: name inside crds/ → content. */
export function renderCrdFiles(
  crds: readonly CustomResourceDefinition[] = buildAllCrds(),
): Map<string, string> {
  return new Map(crds.map((crd) => [crdFileName(crd), renderCrd(crd)]));
}
