package diff

import (
	"reflect"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/driftfix/driftfix/bot/drift"
)

// This file types each difference's path by the kind's schema, so outputs
// decide from the schema alone whether another writer's live value may be
// shown (drift.LiveShown): a field the schema types as an integer, number or
// boolean holds no text. The compiled-in types answer for built-in kinds, the
// CRD's OpenAPI schema in the snapshot for custom resources; a path neither
// declares is not typed.

// objectMetaT is the type of every object's metadata, custom resources' too.
var objectMetaT = reflect.TypeOf(metav1.ObjectMeta{})

// markSchemaScalars sets SchemaScalar on every difference of cmp whose path
// the schema of its kind types as an integer, number or boolean.
func markSchemaScalars(cmp *drift.Comparison, s *drift.Snapshot) {
	var crds map[string]drift.Object // group/kind → CRD, built on first use
	b := builtins()
	for i := range cmp.Diffs {
		d := &cmp.Diffs[i]
		if len(d.Path) == 0 || d.Index < 0 || d.Index >= len(s.Resources) {
			continue
		}
		r := &s.Resources[d.Index]
		o := r.Live
		if o == nil {
			o = r.Target
		}
		apiVersion, kind := drift.Str(o, "apiVersion"), drift.Str(o, "kind")
		if t := b.typeOf(apiVersion, kind); t != nil {
			d.SchemaScalar = b.scalarAt(t, d.Path)
			continue
		}
		if d.Path[0] == "metadata" {
			d.SchemaScalar = b.scalarAt(objectMetaT, d.Path[1:])
			continue
		}
		if crds == nil {
			crds = crdsOf(s.Cluster)
		}
		group, version := drift.SplitAPIVersion(apiVersion)
		d.SchemaScalar = crdScalarAt(crds[group+"/"+kind], version, d.Path)
	}
}

// scalarAt reports whether every step of p is a field, key or item the
// compiled-in type t declares, ending in an integer, float or boolean kind
// that encodes as itself.
func (b *builtin) scalarAt(t reflect.Type, p drift.Pointer) bool {
	fi := fieldInfo{typ: t, known: t != nil}
	for _, k := range p {
		var ok bool
		if fi, ok = b.child(fi.typ, k); !ok || !fi.known {
			return false
		}
	}
	lt := derefType(fi.typ)
	if lt == nil {
		return false
	}
	switch lt.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
	default:
		return false
	}
	for _, c := range []reflect.Type{lt, reflect.PointerTo(lt)} {
		for _, m := range ownEncodings {
			if c.Implements(m) {
				return false // it encodes as something else, a string perhaps
			}
		}
	}
	return true
}

// crdsOf indexes the CustomResourceDefinitions of a snapshot's cluster
// objects by group/kind.
func crdsOf(cluster []drift.Object) map[string]drift.Object {
	out := map[string]drift.Object{}
	for _, o := range cluster {
		if drift.Str(o, "kind") != "CustomResourceDefinition" {
			continue
		}
		if g, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion")); g != "apiextensions.k8s.io" {
			continue
		}
		out[drift.Str(o, "spec", "group")+"/"+drift.Str(o, "spec", "names", "kind")] = o
	}
	return out
}

// crdScalarAt reports whether the CRD's OpenAPI schema for version declares
// p with type integer, number or boolean (an int-or-string is neither).
func crdScalarAt(crd drift.Object, version string, p drift.Pointer) bool {
	if crd == nil {
		return false
	}
	var node map[string]any
	for _, e := range drift.List(crd, "spec", "versions") {
		if m, ok := e.(map[string]any); ok && drift.Str(m, "name") == version {
			node = drift.Map(m, "schema", "openAPIV3Schema")
		}
	}
	for _, tok := range p {
		if node == nil {
			return false
		}
		if next, ok := drift.Map(node, "properties")[tok].(map[string]any); ok {
			node = next
			continue
		}
		if items := drift.Map(node, "items"); items != nil {
			if _, err := strconv.Atoi(tok); err == nil {
				node = items
				continue
			}
		}
		node, _ = node["additionalProperties"].(map[string]any)
	}
	if node == nil || node["x-kubernetes-int-or-string"] == true {
		return false
	}
	switch node["type"] {
	case "integer", "number", "boolean":
		return true
	}
	return false
}
