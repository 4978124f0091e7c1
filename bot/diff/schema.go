package diff

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubescheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/driftfix/driftfix/bot/drift"
)

// builtin knows the compiled-in Kubernetes types, as Argo CD's own scheme does:
// it gives list merge keys (strategic merge patch), quantity fields, and whether
// an object decodes strictly into its type.
type builtin struct {
	types map[schema.GroupVersionKind]reflect.Type
	mu    sync.Mutex
	// fields caches the json-name → field lookup per struct type.
	fields map[reflect.Type]map[string]fieldInfo
}

type fieldInfo struct {
	typ      reflect.Type
	mergeKey string
	known    bool // the path is declared by a compiled-in type
}

var (
	builtinOnce sync.Once
	builtinSet  *builtin
	quantityT   = reflect.TypeOf(resource.Quantity{})
	intOrStrT   = reflect.TypeOf(intstr.IntOrString{})
)

func builtins() *builtin {
	builtinOnce.Do(func() {
		// The same types Argo CD compares with: client-go's, every built-in
		// API group, registered into a scheme of our own (other packages add
		// kinds to client-go's global one).
		s := runtime.NewScheme()
		if err := kubescheme.AddToScheme(s); err != nil {
			panic("register built-in Kubernetes types: " + err.Error())
		}
		b := &builtin{types: map[schema.GroupVersionKind]reflect.Type{}, fields: map[reflect.Type]map[string]fieldInfo{}}
		for gvk, t := range s.AllKnownTypes() {
			if strings.HasSuffix(gvk.Kind, "List") || gvk.Version == runtime.APIVersionInternal {
				continue
			}
			b.types[gvk] = t
		}
		builtinSet = b
	})
	return builtinSet
}

// typeOf returns the Go type of a built-in apiVersion/kind, or nil for custom resources.
func (b *builtin) typeOf(apiVersion, kind string) reflect.Type {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil
	}
	return b.types[gv.WithKind(kind)]
}

// child returns the type of the JSON field name inside struct type t, and the
// strategic merge key when that field is a list merged by key.
func (b *builtin) child(t reflect.Type, name string) (fieldInfo, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return fieldInfo{}, false
	}
	switch t.Kind() {
	case reflect.Map:
		return fieldInfo{typ: t.Elem(), known: true}, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // []byte is a base64 string
			return fieldInfo{}, false
		}
		return fieldInfo{typ: t.Elem(), known: true}, true
	case reflect.Struct:
	default:
		return fieldInfo{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	fs, ok := b.fields[t]
	if !ok {
		fs = map[string]fieldInfo{}
		collectFields(t, fs)
		b.fields[t] = fs
	}
	fi, ok := fs[name]
	return fi, ok
}

func collectFields(t reflect.Type, fs map[string]fieldInfo) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, fs)
			}
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fi := fieldInfo{typ: f.Type, known: true}
		if f.Tag.Get("patchStrategy") != "" && strings.Contains(f.Tag.Get("patchStrategy"), "merge") {
			fi.mergeKey = f.Tag.Get("patchMergeKey")
		}
		fs[name] = fi
	}
}

// plainString reports whether the value at p of a t is a string the type's
// encoding keeps as written: every step of p a field, key or item the
// compiled-in types declare, ending in a string kind with no encoding of its
// own. Decoding such a string and encoding it again gives the same string,
// so neither Argo CD's comparison in the type's encoding nor the API server's
// stored form can change it.
func (b *builtin) plainString(t reflect.Type, p drift.Pointer) bool {
	fi := fieldInfo{typ: t, known: t != nil}
	for _, k := range p {
		var ok bool
		if fi, ok = b.child(fi.typ, k); !ok || !fi.known {
			return false
		}
	}
	lt := fi.typ
	for lt != nil && lt.Kind() == reflect.Pointer {
		lt = lt.Elem()
	}
	if lt == nil || lt.Kind() != reflect.String {
		return false
	}
	for _, c := range []reflect.Type{lt, reflect.PointerTo(lt)} {
		for _, m := range ownEncodings {
			if c.Implements(m) {
				return false
			}
		}
	}
	return true
}

// ownEncodings are the interfaces through which a type encodes or decodes
// itself instead of as its kind.
var ownEncodings = []reflect.Type{
	reflect.TypeFor[json.Marshaler](), reflect.TypeFor[json.Unmarshaler](),
	reflect.TypeFor[encoding.TextMarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
}

// isQuantity reports whether t is resource.Quantity.
func isQuantity(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t == quantityT
}

// decodesStrictly reports whether obj decodes into its compiled-in type with no
// unknown field; Argo CD only canonicalizes an object that does.
func (b *builtin) decodesStrictly(t reflect.Type, obj map[string]any) bool {
	raw, err := json.Marshal(obj)
	if err != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(reflect.New(t).Interface()) == nil
}

// removesMergeKey returns the merge key p names when p is the merge key
// field of an item of a list the built-in type t merges by key (strategic
// merge patch), else "".
func (b *builtin) removesMergeKey(t reflect.Type, p drift.Pointer) string {
	cur := fieldInfo{typ: t, known: true}
	for i := 0; i < len(p); i++ {
		typ := derefType(cur.typ)
		if typ == nil {
			return ""
		}
		switch typ.Kind() {
		case reflect.Struct:
			fi, ok := b.child(typ, p[i])
			if !ok {
				return ""
			}
			if fi.mergeKey != "" && i+2 == len(p)-1 && p[i+2] == fi.mergeKey {
				return fi.mergeKey
			}
			cur = fi
		case reflect.Slice:
			cur = fieldInfo{typ: typ.Elem(), known: true}
		case reflect.Map:
			cur = fieldInfo{typ: typ.Elem(), known: true}
		default:
			return ""
		}
	}
	return ""
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

// emptyNullStructs returns o with every null whose field is a plain struct
// (not a pointer, no encoding of its own: a Deployment's strategy) set to an
// empty object, as re-encoding through the kind's type gives: the struct
// decodes to its zero value and encodes as {}. Other nulls are left to
// dropNulls. Maps on the way to a change are copied; o is not changed.
func (b *builtin) emptyNullStructs(t reflect.Type, o map[string]any) map[string]any {
	var out map[string]any
	for k, v := range o {
		fi, ok := b.child(t, k)
		if !ok || !fi.known {
			continue
		}
		var nv any
		switch x := v.(type) {
		case nil:
			ft := fi.typ
			if ft == nil || ft.Kind() != reflect.Struct || ft.Implements(jsonMarshaler) || reflect.PointerTo(ft).Implements(jsonMarshaler) {
				continue
			}
			nv = map[string]any{}
		case map[string]any:
			c := b.emptyNullStructs(fi.typ, x)
			if reflect.ValueOf(c).UnsafePointer() == reflect.ValueOf(x).UnsafePointer() {
				continue
			}
			nv = c
		default:
			continue
		}
		if out == nil {
			out = make(map[string]any, len(o))
			for k2, v2 := range o {
				out[k2] = v2
			}
		}
		out[k] = nv
	}
	if out == nil {
		return o
	}
	return out
}
