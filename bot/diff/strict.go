package diff

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

var jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

// decodesItself caches, per type, whether t or *t has its own JSON decoder
// (reflect's Implements is slow, and fits asks it for every value).
var decodesItself sync.Map // reflect.Type → bool

func ownDecoder(t reflect.Type) bool {
	if v, ok := decodesItself.Load(t); ok {
		return v.(bool)
	}
	own := reflect.PointerTo(t).Implements(jsonUnmarshaler) || t.Implements(jsonUnmarshaler)
	decodesItself.Store(t, own)
	return own
}

// fits reports whether a decoded JSON value decodes into type t with no
// unknown field and no type mismatch — what a strict decode into the
// compiled-in type accepts — without the cost of encoding and decoding it.
// It walks a description of t built once (fitsNodeOf); the differential
// test holds it to fitsByType, the same test asked of reflect at every step.
func (b *builtin) fits(t reflect.Type, v any, depth int) bool {
	return b.fitsNodeOf(t).fits(v, depth)
}

// fitsNode is what fits needs to know of one Go type (pointers removed).
type fitsNode struct {
	kind reflect.Kind
	// own: the type decodes itself; ownObject: from a map or list too.
	own, ownObject bool
	bytes          bool                 // []byte, a base64 string
	elem           *fitsNode            // map and slice
	fields         map[string]*fitsNode // struct: as b.child names them
}

var fitsNodes sync.Map // reflect.Type → *fitsNode, complete graphs only

func (b *builtin) fitsNodeOf(t reflect.Type) *fitsNode {
	if n, ok := fitsNodes.Load(t); ok {
		return n.(*fitsNode)
	}
	building := map[reflect.Type]*fitsNode{}
	n := b.buildFitsNode(t, building)
	for bt, bn := range building {
		fitsNodes.LoadOrStore(bt, bn)
	}
	return n
}

func (b *builtin) buildFitsNode(t reflect.Type, building map[reflect.Type]*fitsNode) *fitsNode {
	if n, ok := fitsNodes.Load(t); ok {
		return n.(*fitsNode)
	}
	if n, ok := building[t]; ok {
		return n
	}
	n := &fitsNode{}
	building[t] = n
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	n.kind = t.Kind()
	if ownDecoder(t) {
		n.own = true
		n.ownObject = t.Kind() == reflect.Struct && !strings.HasPrefix(t.PkgPath(), "k8s.io/apimachinery/pkg/api/resource") &&
			t.Name() != "IntOrString" && t.Name() != "Time" && t.Name() != "MicroTime"
		return n
	}
	switch t.Kind() {
	case reflect.Struct:
		b.mu.Lock()
		fs, ok := b.fields[t]
		if !ok {
			fs = map[string]fieldInfo{}
			collectFields(t, fs)
			b.fields[t] = fs
		}
		b.mu.Unlock()
		n.fields = make(map[string]*fitsNode, len(fs))
		for name, fi := range fs {
			n.fields[name] = b.buildFitsNode(fi.typ, building)
		}
	case reflect.Map:
		n.elem = b.buildFitsNode(t.Elem(), building)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			n.bytes = true
		} else {
			n.elem = b.buildFitsNode(t.Elem(), building)
		}
	}
	return n
}

func (n *fitsNode) fits(v any, depth int) bool {
	if depth > maxWalkDepth {
		return false
	}
	if v == nil {
		return true // null decodes into anything as its zero value
	}
	if n.own {
		switch v.(type) {
		case map[string]any, []any:
			return n.ownObject
		}
		return true
	}
	switch n.kind {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, e := range m {
			f := n.fields[k]
			if f == nil || !f.fits(e, depth+1) {
				return false
			}
		}
		return true
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range m {
			if !n.elem.fits(e, depth+1) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if n.bytes {
			_, ok := v.(string)
			return ok
		}
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range l {
			if !n.elem.fits(e, depth+1) {
				return false
			}
		}
		return true
	case reflect.String:
		_, ok := v.(string)
		return ok
	case reflect.Bool:
		_, ok := v.(bool)
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch x := v.(type) {
		case int64:
			return true
		case float64:
			return x == float64(int64(x))
		}
		return false
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, float64:
			return true
		}
		return false
	case reflect.Interface:
		return true
	}
	return false
}
