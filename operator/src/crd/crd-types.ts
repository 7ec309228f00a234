import type { z } from 'zod';
import type { CelRule, KindInfo } from '../resources/index.ts';

/** The shapes of a generated CustomResourceDefinition: its schema nodes, printer columns and kinds. */

export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps the generator emits. */
export interface JSONSchemaProps {
  description?: string;
  title?: string;
  type?: SchemaType;
  format?: string;
  nullable?: boolean;
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: string[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  items?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: CelRule[];
}

export interface PrinterColumn {
  name: string;
  type: KindInfo['printerColumns'][number]['type'];
  jsonPath: string;
  description: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: JSONSchemaProps };
    }[];
  };
}

/** One kind as listed in KINDS. */
export interface KindEntry {
  info: KindInfo;
  schema: z.ZodType;
  spec: z.ZodType;
  status: z.ZodType;
}
