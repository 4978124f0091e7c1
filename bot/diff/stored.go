package diff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/driftfix/driftfix/bot/drift"
)

// remarshal decodes obj into its compiled-in Kubernetes type and encodes it
// again. Argo CD does this to both sides before it compares a built-in object,
// and the API server does it before it stores one: quantities come out in
// canonical form, omitempty zero values are dropped, numbers and
// int-or-strings take their type's form. With strict, an unknown field or a
// mistyped value fails the decode and obj is returned unchanged (Argo CD then
// compares the object as written); without, unknown fields are dropped, as the
// API server drops them. Only keys obj has are kept: a type's own encoders add
// some (creationTimestamp: null) that are nobody's value.
//
// fastRemarshal gives the same result without the converter where it can,
// sharing with obj what the re-encoding leaves as it is (obj itself when
// nothing changes): the result is only read. remarshalConverted is the
// converter's way.
func (b *builtin) remarshal(t reflect.Type, obj map[string]any, strict bool) (map[string]any, bool) {
	if out, ok := fastRemarshal(t, obj, true); ok {
		return out, true
	}
	return b.remarshalConverted(t, obj, strict)
}

// remarshalConverted is remarshal through runtime.DefaultUnstructuredConverter
// (and a JSON round trip where the converter fails).
func (b *builtin) remarshalConverted(t reflect.Type, obj map[string]any, strict bool) (map[string]any, bool) {
	typed := reflect.New(t).Interface()
	// The map-to-struct converter gives what a JSON decode gives, without the
	// encoding; where it cannot, the JSON round trip decides. A strict caller
	// has checked with fits that obj decodes strictly.
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed); err != nil {
		raw, err := json.Marshal(obj)
		if err != nil {
			return obj, false
		}
		typed = reflect.New(t).Interface()
		dec := json.NewDecoder(bytes.NewReader(raw))
		if strict {
			dec.DisallowUnknownFields()
		}
		if err := dec.Decode(typed); err != nil {
			return obj, false
		}
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return obj, false
	}
	kept, _ := keepKeysOf(obj, out).(map[string]any)
	if kept == nil {
		return obj, false
	}
	return kept, true
}

// keepKeysOf returns v with only the map keys that orig has, recursively, and
// list items matched by position when both lists have the same length. v
// must be the caller's own (remarshal's fresh decode): its maps lose the
// other keys and its lists take the results in place.
func keepKeysOf(orig, v any) any {
	switch o := orig.(type) {
	case map[string]any:
		n, ok := v.(map[string]any)
		if !ok {
			return v
		}
		if n == nil {
			return map[string]any{}
		}
		if reflect.ValueOf(n).UnsafePointer() == reflect.ValueOf(o).UnsafePointer() {
			return v // orig itself: it has every key
		}
		for k, nv := range n {
			if ov, ok := o[k]; ok {
				n[k] = keepKeysOf(ov, nv)
			} else {
				delete(n, k)
			}
		}
		return n
	case []any:
		n, ok := v.([]any)
		if !ok || len(n) != len(o) {
			return v
		}
		if n == nil {
			return []any{}
		}
		for i := range n {
			n[i] = keepKeysOf(o[i], n[i])
		}
		return n
	}
	return v
}

// storedForm sets, on each difference Git declares in a built-in object, the
// value the API server stores for Git's declaration: Git's manifest decoded
// into its k8s.io/api type and encoded again (unknown fields dropped).
func (w *walker) storedForm() {
	if w.dryRun != nil {
		for i := range w.diffs {
			d := &w.diffs[i]
			if !d.Unexplained && len(d.Path) > 0 {
				d.HasDryRun = true
				d.DryRun, d.InDryRun = d.Path.Get(w.dryRun)
			}
		}
	}
	t := w.rootType
	if t == nil {
		t = servedOnly(drift.Str(w.rawTarget, "apiVersion"), w.ref.Kind)
	}
	if t == nil {
		return
	}
	var once sync.Once
	var stored drift.Object
	get := func() drift.Object {
		once.Do(func() {
			// The fast way does not change Git's manifest; it shares with
			// it the values the encoding leaves as they are, never the
			// object itself (a caller tells the stored form from the
			// manifest as written by identity). The converter's way is
			// given a copy.
			if s, ok := fastRemarshal(t, w.rawTarget, true); ok {
				if reflect.ValueOf(s).UnsafePointer() == reflect.ValueOf(w.rawTarget).UnsafePointer() {
					s = copyMap(s)
				}
				stored = s
				return
			}
			target := drift.DeepCopy(w.rawTarget).(map[string]any)
			if s, ok := w.b.remarshalConverted(t, target, false); ok {
				stored = s
			}
		})
		return stored
	}
	// Where Git writes a non-empty string into a plain string field, the
	// stored form there is Git's manifest itself: no decode is needed.
	asWritten := func() drift.Object { return w.rawTarget }
	by := "k8s.io/api " + drift.Str(w.rawTarget, "apiVersion") + " " + w.ref.Kind
	for i := range w.diffs {
		d := &w.diffs[i]
		if !d.InGit || d.Unexplained || len(d.Path) == 0 {
			continue
		}
		d.StoredObject, d.StoredBy = get, by
		if v, ok := d.GitPath.Get(w.rawTarget); ok {
			if s, isStr := v.(string); isStr && s != "" && w.b.plainString(t, d.GitPath) {
				d.StoredObject = asWritten
			}
		}
	}
}

// servedOnly returns the Go type of a kind the API server decodes into a
// compiled-in type but Argo CD's scheme does not know (so Argo CD compares it
// as written): CustomResourceDefinition.
func servedOnly(apiVersion, kind string) reflect.Type {
	if apiVersion == "apiextensions.k8s.io/v1" && kind == "CustomResourceDefinition" {
		return reflect.TypeOf(apiextensionsv1.CustomResourceDefinition{})
	}
	return nil
}

// encodingMatters reports whether a type's encoding could change a
// difference: an empty or zero value Git declares that live lacks (omitempty
// drops it), or two scalars one of which is a string (a quantity, duration or
// other value with a canonical spelling) unless both are strings of a plain
// string field, which the encoding keeps as written.
func (w *walker) encodingMatters() bool {
	for i := range w.diffs {
		d := &w.diffs[i]
		if len(d.HiddenBy) > 0 || !d.InGit {
			continue
		}
		if !d.InLive && zeroValue(d.Git) {
			return true
		}
		if d.InLive && scalar(d.Git) && scalar(d.Live) {
			_, gs := d.Git.(string)
			_, ls := d.Live.(string)
			if gs && ls && w.b.plainString(w.rootType, d.Path) {
				continue
			}
			if gs || ls {
				return true
			}
		}
	}
	return false
}

// zeroValue reports whether v is what an omitempty field drops: null, "",
// 0, false, or an empty map or list.
func zeroValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case int64:
		return x == 0
	case float64:
		return x == 0
	case int:
		return x == 0
	}
	return drift.IsEmpty(v)
}

func scalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}
