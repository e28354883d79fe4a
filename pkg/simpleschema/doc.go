// Package simpleschema turns kro's SimpleSchema, the compact
// "type | marker=value" notation an RGD uses for its instances' spec, into the
// OpenAPI v3 schema of the generated CRD.
//
// Every error names the field it is about through a field.Path, so that the
// message reads the same in `kubectl describe`, an admission denial and
// `kubectl kro validate`. Output is deterministic: the same input always gives
// the same schema, byte for byte once marshalled.
package simpleschema
