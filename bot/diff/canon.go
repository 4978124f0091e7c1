package diff

import (
	"encoding/base64"
	"maps"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// This file gives remarshal's result without its two reflection round trips
// through apimachinery's unstructured converter: a walk over the decoded
// object against its Go type, which computes what decoding each value into
// its field and encoding the field again gives, kept to the object's keys.
// It follows runtime.DefaultUnstructuredConverter's rules (FromUnstructured,
// then ToUnstructured) where they are plain (strings, bools, numbers and
// their conversions, []byte as base64, maps, lists, pointers, structs,
// omitempty), and calls the very functions the converter calls for a type
// that encodes itself (Quantity, IntOrString, Time, RawExtension and the
// like). Wherever the converter would fail, where a JSON decode would then
// decide, or where a type does something this walk does not model, it gives
// up and remarshal takes the converter's way. canon_fuzz_test.go compares the
// two on generated objects.

// canonKind is how a Go type is decoded from and encoded to unstructured data.
type canonKind uint8

const (
	ckUnsupported canonKind = iota // not modelled: remarshal takes the converter's way
	ckString
	ckBool
	ckInt
	ckUint
	ckFloat
	ckBytes // []byte, a base64 string
	ckSlice
	ckMap
	ckPointer
	ckStruct
	ckOwn // a struct that decodes and encodes itself
)

// canonType is what the walk needs to know about one Go type.
type canonType struct {
	t     reflect.Type
	kind  canonKind
	bits  int        // size of an integer or float kind
	elem  *canonType // slice, map and pointer
	entry *value.TypeReflectCacheEntry
	// struct fields by JSON name, embedded structs' fields flattened in.
	fields map[string]*canonField
	// dash: a field is named "-" (its tag is exactly that): the converter
	// still decodes an input key "-" into it, so such an input is not
	// modelled.
	dash bool
	// omitZero is the omitzero test of an own-encoding struct.
	omitZero func(reflect.Value) bool

	zeroOnce sync.Once
	zero     any // a struct's zero value encoded, when zeroOK
	zeroOK   bool
}

// canonField is one JSON field of a struct.
type canonField struct {
	ct        *canonType
	omitEmpty bool
	omitZero  bool
}

var (
	canonMu    sync.Mutex
	canonTypes sync.Map // reflect.Type → *canonType, complete graphs only
)

// canonTypeOf returns the walk's description of t, built once.
func canonTypeOf(t reflect.Type) *canonType {
	if c, ok := canonTypes.Load(t); ok {
		return c.(*canonType)
	}
	canonMu.Lock()
	defer canonMu.Unlock()
	if c, ok := canonTypes.Load(t); ok {
		return c.(*canonType)
	}
	building := map[reflect.Type]*canonType{}
	c := buildCanonType(t, building)
	for bt, bc := range building {
		canonTypes.LoadOrStore(bt, bc)
	}
	return c
}

func buildCanonType(t reflect.Type, building map[reflect.Type]*canonType) *canonType {
	if c, ok := canonTypes.Load(t); ok {
		return c.(*canonType)
	}
	if c, ok := building[t]; ok {
		return c
	}
	c := &canonType{t: t}
	building[t] = c
	c.entry = value.TypeReflectEntryOf(t)
	fromOwn, toOwn := c.entry.CanConvertFromUnstructured(), c.entry.CanConvertToUnstructured()
	switch t.Kind() {
	case reflect.String:
		c.kind = ckString
	case reflect.Bool:
		c.kind = ckBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.kind, c.bits = ckInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.kind, c.bits = ckUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		c.kind, c.bits = ckFloat, t.Bits()
	case reflect.Slice:
		if fromOwn {
			break
		}
		if t.Elem().Kind() == reflect.Uint8 {
			c.kind = ckBytes
			break
		}
		c.kind, c.elem = ckSlice, buildCanonType(t.Elem(), building)
	case reflect.Map:
		if fromOwn || t.Key().Kind() != reflect.String {
			break
		}
		c.kind, c.elem = ckMap, buildCanonType(t.Elem(), building)
	case reflect.Pointer:
		// The converter decodes into the pointee; it encodes a non-nil
		// pointer as its pointee (with the pointee's own encoding, if any).
		c.kind, c.elem = ckPointer, buildCanonType(t.Elem(), building)
	case reflect.Struct:
		switch {
		case fromOwn && toOwn:
			c.kind, c.omitZero = ckOwn, value.OmitZeroFunc(t)
		case !fromOwn && !toOwn:
			c.fields = map[string]*canonField{}
			if flattenFields(c, t, building) {
				c.kind = ckStruct
			}
		}
	}
	if toOwn && c.kind != ckOwn && c.kind != ckPointer {
		// A scalar, list or map kind with an encoding of its own: the
		// converter uses it in some places and not in others.
		c.kind = ckUnsupported
	}
	return c
}

// flattenFields adds t's fields to c.fields as the converter names them
// (runtime's fieldInfoFromField), an embedded struct without a name
// contributing its own. It reports false for a struct the walk does not
// model: unexported fields, embedded non-structs, two fields of one name.
func flattenFields(c *canonType, t reflect.Type, building map[reflect.Type]*canonType) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			return false
		}
		var name string
		var omitEmpty, omitZero bool
		tag, has := f.Tag.Lookup("json")
		if !has || tag == "" {
			if !f.Anonymous {
				name = f.Name
			}
		} else {
			items := strings.Split(tag, ",")
			name = items[0]
			if name == "" && !f.Anonymous {
				name = f.Name
			}
			for _, o := range items[1:] {
				switch o {
				case "omitempty":
					omitEmpty = true
				case "omitzero":
					omitZero = true
				}
			}
		}
		if name == "" {
			// Inlined: decoded from and encoded into the same map.
			if f.Type.Kind() != reflect.Struct || omitZero {
				return false
			}
			e := value.TypeReflectEntryOf(f.Type)
			if e.CanConvertFromUnstructured() || e.CanConvertToUnstructured() {
				return false
			}
			if !flattenFields(c, f.Type, building) {
				return false
			}
			continue
		}
		if name == "-" {
			c.dash = true
			continue
		}
		if _, dup := c.fields[name]; dup {
			return false
		}
		c.fields[name] = &canonField{ct: buildCanonType(f.Type, building), omitEmpty: omitEmpty, omitZero: omitZero}
	}
	return true
}

// fastRemarshal is remarshal for a built-in object without the converter's
// round trips. ok is false where the walk does not model what the converter
// does; the caller then takes the converter's way. obj is never changed.
// With share, the result shares with obj every value (map, list) that the
// re-encoding leaves as it is, obj itself included; without, nothing of obj
// is shared.
func fastRemarshal(t reflect.Type, obj map[string]any, share bool) (map[string]any, bool) {
	ct := canonTypeOf(t)
	if ct.kind != ckStruct || obj == nil {
		return nil, false
	}
	r, ok := ct.conv(obj, true, share)
	if !ok {
		return nil, false
	}
	m, _ := r.out.(map[string]any)
	return m, m != nil
}

// canonResult is what conv makes of one value.
type canonResult struct {
	out   any  // the value decoded and encoded again, kept to the input's keys
	empty bool // the decoded value is empty (omitempty drops it)
	zero  bool // the decoded value is zero (omitzero drops it; own-encoding structs only)
	same  bool // out equals the input, Go types included (only known with share)
}

// conv returns what decoding v into a value of c's type and encoding that
// value again gives, with only the map keys v has (remarshal's keepKeysOf).
// addr says whether the converter's value there is addressable (not a map's
// value), which decides whether a pointer-receiver encoder is found. With
// share, a map or list the re-encoding leaves as it is comes back itself.
func (c *canonType) conv(v any, addr, share bool) (canonResult, bool) {
	if v == nil {
		return c.convNull(addr)
	}
	switch c.kind {
	case ckString:
		s, isStr := v.(string)
		return canonResult{out: s, empty: s == "", same: true}, isStr
	case ckBool:
		b, isBool := v.(bool)
		return canonResult{out: b, empty: !b, same: true}, isBool
	case ckInt:
		return c.convInt(v)
	case ckUint:
		return c.convUint(v)
	case ckFloat:
		return c.convFloat(v)
	case ckBytes:
		return c.convBytes(v)
	case ckSlice:
		return c.convSlice(v, share)
	case ckMap:
		return c.convMap(v, share)
	case ckPointer:
		r, ok := c.elem.conv(v, true, share)
		r.empty, r.zero = false, false
		return r, ok
	case ckStruct:
		return c.convStruct(v, addr, share)
	case ckOwn:
		return c.convOwn(v, addr)
	}
	return canonResult{}, false
}

// convInt is conv for a signed integer of c.bits bits: an int64, or an
// integral float64 within int64, wrapped to the width.
func (c *canonType) convInt(v any) (canonResult, bool) {
	var x int64
	same := false
	switch n := v.(type) {
	case int64:
		x, same = n, true
	case float64:
		// An integral float converts (through int64, as reflect does);
		// beyond int64's range the conversion is not defined.
		if n != math.Trunc(n) || n < -(1<<63) || n >= 1<<63 {
			return canonResult{}, false
		}
		x = int64(n)
	default:
		return canonResult{}, false
	}
	if c.bits < 64 {
		shift := 64 - c.bits
		t := x << shift >> shift
		same = same && t == x
		x = t
	}
	return canonResult{out: x, empty: x == 0, same: same}, true
}

// convUint is conv for an unsigned integer of c.bits bits, wrapped to the
// width; one beyond int64 the converter refuses.
func (c *canonType) convUint(v any) (canonResult, bool) {
	var u uint64
	same := false
	switch n := v.(type) {
	case int64:
		u, same = uint64(n), n >= 0
	case float64:
		if n != math.Trunc(n) || n < 0 || n >= 1<<63 {
			return canonResult{}, false
		}
		u = uint64(n)
	default:
		return canonResult{}, false
	}
	if c.bits < 64 {
		t := u & (1<<c.bits - 1)
		same = same && t == u
		u = t
	}
	if u > math.MaxInt64 {
		return canonResult{}, false // the converter's encoder refuses it
	}
	return canonResult{out: int64(u), empty: u == 0, same: same}, true
}

// convFloat is conv for a float, rounded to float32 where c.bits is 32.
func (c *canonType) convFloat(v any) (canonResult, bool) {
	var f float64
	same := false
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f, same = n, true
	default:
		return canonResult{}, false
	}
	if c.bits == 32 {
		r := float64(float32(f))
		same = same && r == f
		f = r
	}
	return canonResult{out: f, empty: f == 0, same: same}, true
}

// convBytes is conv for a []byte: base64 text decoded and encoded again.
func (c *canonType) convBytes(v any) (canonResult, bool) {
	s, isStr := v.(string)
	if !isStr {
		return canonResult{}, false
	}
	if s == "" {
		return canonResult{out: "", empty: true, same: true}, true
	}
	// encoding/json decodes a []byte with base64.StdEncoding.Decode
	// and encodes it with StdEncoding.
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, []byte(s))
	if err != nil {
		return canonResult{}, false
	}
	out := base64.StdEncoding.EncodeToString(b[:n])
	return canonResult{out: out, empty: n == 0, same: out == s}, true
}

// convSlice is conv for a list, element by element.
func (c *canonType) convSlice(v any, share bool) (canonResult, bool) {
	l, isList := v.([]any)
	if !isList || l == nil {
		return canonResult{}, false
	}
	var o []any
	if !share {
		o = make([]any, len(l))
	}
	for i, e := range l {
		r, ok := c.elem.conv(e, true, share)
		if !ok {
			return canonResult{}, false
		}
		if share {
			if r.same {
				continue
			}
			if o == nil {
				o = append([]any(nil), l...)
			}
		}
		o[i] = r.out
	}
	if share && o == nil {
		return canonResult{out: l, empty: len(l) == 0, same: true}, true
	}
	return canonResult{out: o, empty: len(l) == 0}, true
}

// convMap is conv for a map with string keys, value by value.
func (c *canonType) convMap(v any, share bool) (canonResult, bool) {
	m, isMap := v.(map[string]any)
	if !isMap || m == nil {
		return canonResult{}, false
	}
	var o map[string]any
	if !share {
		o = make(map[string]any, len(m))
	}
	for k, e := range m {
		r, ok := c.elem.conv(e, false, share)
		if !ok {
			return canonResult{}, false
		}
		if share {
			if r.same {
				continue
			}
			if o == nil {
				o = copyMap(m)
			}
		}
		o[k] = r.out
	}
	if share && o == nil {
		return canonResult{out: m, empty: len(m) == 0, same: true}, true
	}
	return canonResult{out: o, empty: len(m) == 0}, true
}

// convStruct is conv for a struct: the fields it knows re-encoded (and
// dropped where omitempty or omitzero drops them), the others skipped.
func (c *canonType) convStruct(v any, addr, share bool) (canonResult, bool) {
	m, isMap := v.(map[string]any)
	if !isMap || m == nil {
		return canonResult{}, false
	}
	if c.dash {
		if _, has := m["-"]; has {
			return canonResult{}, false
		}
	}
	var o map[string]any
	if !share {
		o = make(map[string]any, len(m))
	}
	for k, e := range m {
		f := c.fields[k]
		keep := f != nil // an unknown field: the converter skips it
		var r canonResult
		if keep {
			var ok bool
			if r, ok = f.ct.conv(e, addr, share); !ok {
				return canonResult{}, false
			}
			if f.omitZero {
				if f.ct.kind != ckOwn || f.ct.omitZero == nil {
					return canonResult{}, false
				}
				keep = !r.zero
			}
			keep = keep && !(f.omitEmpty && r.empty)
		}
		switch {
		case !share:
			if keep {
				o[k] = r.out
			}
		case keep && r.same:
		default:
			if o == nil {
				o = copyMap(m)
			}
			if keep {
				o[k] = r.out
			} else {
				delete(o, k)
			}
		}
	}
	if share && o == nil {
		return canonResult{out: m, same: true}, true
	}
	return canonResult{out: o}, true
}

func copyMap(m map[string]any) map[string]any { return maps.Clone(m) }

// convNull is conv for a null (or absent) value: the type's zero value
// encoded.
func (c *canonType) convNull(addr bool) (canonResult, bool) {
	switch c.kind {
	case ckString:
		return canonResult{out: "", empty: true}, true
	case ckBool:
		return canonResult{out: false, empty: true}, true
	case ckInt, ckUint:
		return canonResult{out: int64(0), empty: true}, true
	case ckFloat:
		return canonResult{out: float64(0), empty: true}, true
	case ckBytes, ckSlice, ckMap, ckPointer:
		return canonResult{out: nil, empty: true, same: true}, true
	case ckStruct:
		if !addr {
			return canonResult{}, false
		}
		c.zeroOnce.Do(func() {
			z, err := runtime.DefaultUnstructuredConverter.ToUnstructured(reflect.New(c.t).Interface())
			c.zero, c.zeroOK = z, err == nil
		})
		if !c.zeroOK {
			return canonResult{}, false
		}
		return canonResult{out: runtime.DeepCopyJSONValue(c.zero)}, true
	case ckOwn:
		return c.convOwn(nil, addr)
	}
	return canonResult{}, false
}

// ownKey and ownResult cache what an own-encoding type makes of a scalar
// (a quantity's canonical form): a pure function of the type, the value and
// whether the value is addressable.
type ownKey struct {
	c    *canonType
	v    any
	addr bool
}

type ownResult struct {
	out         any
	zero, valid bool
}

var (
	ownCache     sync.Map // ownKey → ownResult
	ownCacheSize atomic.Int64
)

// maxOwnCache bounds the scalar cache; past it, values are converted each time.
const maxOwnCache = 1 << 14

// convOwn decodes v into a type with its own decoder and encodes it with
// its own encoder, with the converter's own functions for both.
func (c *canonType) convOwn(v any, addr bool) (canonResult, bool) {
	cacheable := false
	switch x := v.(type) {
	case nil, string, int64, bool:
		cacheable = true
	case float64:
		cacheable = x != 0 // 0 and -0 are one key
	}
	var key ownKey
	if cacheable {
		key = ownKey{c: c, v: v, addr: addr}
		if r, hit := ownCache.Load(key); hit {
			res := r.(ownResult)
			return ownOut(v, res.out, res.zero), res.valid
		}
	}
	dv := reflect.New(c.t).Elem()
	if v != nil {
		if err := c.entry.FromUnstructured(reflect.ValueOf(v), dv); err != nil {
			return c.remember(key, cacheable, v, nil, false, false)
		}
	}
	view := dv
	if !addr {
		view = reflect.ValueOf(dv.Interface())
	}
	enc, err := c.entry.ToUnstructured(view)
	if err != nil {
		return c.remember(key, cacheable, v, nil, false, false)
	}
	enc = keepKeysOf(v, enc)
	zero := c.omitZero != nil && c.omitZero(dv)
	switch enc.(type) {
	case nil, string, int64, float64, bool:
		return c.remember(key, cacheable, v, enc, zero, true)
	}
	return canonResult{out: enc, zero: zero}, true
}

// ownOut is an own-encoding struct's result: never empty (a struct is not,
// to omitempty), the same as the input when both are the same scalar.
func ownOut(v, out any, zero bool) canonResult {
	same := false
	switch out.(type) {
	case nil, string, int64, float64, bool:
		same = out == v
	}
	return canonResult{out: out, zero: zero, same: same}
}

func (c *canonType) remember(key ownKey, cacheable bool, v, out any, zero, valid bool) (canonResult, bool) {
	if cacheable && ownCacheSize.Load() < maxOwnCache {
		if _, loaded := ownCache.LoadOrStore(key, ownResult{out: out, zero: zero, valid: valid}); !loaded {
			ownCacheSize.Add(1)
		}
	}
	return ownOut(v, out, zero), valid
}
