package diff

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// The fast re-encoding (fastRemarshal) replaces two calls into apimachinery's
// unstructured converter; these tests hold it to the converter's result
// (remarshalConverted) on generated objects of several built-in kinds:
// quantities and int-or-strings in every spelling, times, durations, raw
// JSON, base64 data, nulls, empty maps and lists, unknown fields, values of
// the wrong type, numbers that need converting.

// canonKinds are the kinds objects are generated for.
var canonKinds = []struct{ apiVersion, kind string }{
	{"apps/v1", "Deployment"}, {"apps/v1", "StatefulSet"}, {"apps/v1", "DaemonSet"},
	{"v1", "Pod"}, {"v1", "Service"}, {"v1", "ConfigMap"}, {"v1", "Secret"},
	{"v1", "ResourceQuota"}, {"v1", "LimitRange"}, {"v1", "PersistentVolumeClaim"}, {"v1", "Endpoints"},
	{"autoscaling/v2", "HorizontalPodAutoscaler"}, {"networking.k8s.io/v1", "Ingress"},
	{"batch/v1", "CronJob"}, {"policy/v1", "PodDisruptionBudget"}, {"rbac.authorization.k8s.io/v1", "Role"},
	{"admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"},
	{"apiextensions.k8s.io/v1", "CustomResourceDefinition"},
}

func canonKindType(t testing.TB, apiVersion, kind string) reflect.Type {
	t.Helper()
	typ := builtins().typeOf(apiVersion, kind)
	if typ == nil {
		typ = servedOnly(apiVersion, kind)
	}
	if typ == nil {
		t.Fatalf("no Go type for %s %s", apiVersion, kind)
	}
	return typ
}

// chooser gives the generator's choices: from fuzz input or a seeded source.
type chooser interface{ intn(n int) int }

type byteChooser struct {
	data []byte
	pos  int
}

func (c *byteChooser) intn(n int) int {
	if c.pos+2 > len(c.data) {
		c.pos = len(c.data)
		return 0
	}
	v := int(binary.LittleEndian.Uint16(c.data[c.pos:]))
	c.pos += 2
	return v % n
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.Intn(n) }

// ownScalars are values given to types that decode themselves: quantities,
// int-or-strings, times, durations, raw JSON.
var ownScalars = []any{
	"100m", "0.1", "1e3", "1E3", " 2Gi ", "128974848", "129e6", "129M", "123Mi", "1.5Gi", "0", "-1", "5", "1k", "1Ki",
	"100Mi", "0.0001", "1m", "10n", "bad quantity", "", "50%", "http",
	int64(0), int64(1), int64(8080), int64(-3), int64(1) << 40, float64(1.5), float64(2), float64(0.001), float64(-0.5),
	"2024-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00", "2024-01-01T00:00:00.123456Z", "not a time",
	"5m", "1h0m0s", "90s", "1h30m",
	true, false,
	map[string]any{"a": int64(1), "b": []any{"x", float64(2.5)}}, map[string]any{}, []any{}, []any{int64(1), "two"},
	map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{".": map[string]any{}}}},
	map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}},
}

var plainStrings = []string{"", "nginx", "TCP", "a b", "IfNotPresent", "RollingUpdate", "10.0.0.1", "<&>", "100m", "x\ny"}

var byteStrings = []any{"", "aGVsbG8=", "aGVsbG8", "aGk=\n", "!!notbase64", "YQ==", "\n", int64(3), []any{int64(1)}}

type canonGen struct {
	c     chooser
	depth int
}

// value generates a value for Go type t: mostly well-typed, sometimes not.
func (g *canonGen) value(t reflect.Type, depth int) any {
	switch g.c.intn(24) {
	case 0:
		return nil
	case 1:
		return map[string]any{}
	case 2:
		return []any{}
	case 3:
		return []any{"x"}[0:g.c.intn(2)]
	case 4:
		return []any{"str", int64(7), float64(2.5), true, float64(3)}[g.c.intn(5)]
	}
	ct := canonTypeOf(t)
	switch ct.kind {
	case ckOwn:
		v := ownScalars[g.c.intn(len(ownScalars))]
		return drift.DeepCopy(v)
	case ckString:
		return plainStrings[g.c.intn(len(plainStrings))]
	case ckBool:
		return g.c.intn(2) == 0
	case ckInt, ckUint:
		return []any{int64(0), int64(1), int64(-1), int64(80), int64(1) << 33, int64(-1) << 40, float64(3), float64(0.5), float64(-2), float64(1e19)}[g.c.intn(10)]
	case ckFloat:
		return []any{int64(0), int64(3), float64(0.1), float64(-1.25), float64(1e40), int64(1)<<60 + 1}[g.c.intn(6)]
	case ckBytes:
		return drift.DeepCopy(byteStrings[g.c.intn(len(byteStrings))])
	case ckPointer:
		return g.value(t.Elem(), depth)
	case ckSlice:
		if depth > 7 {
			return []any{}
		}
		n := g.c.intn(3)
		l := make([]any, n)
		for i := range l {
			l[i] = g.value(t.Elem(), depth+1)
		}
		return l
	case ckMap:
		if depth > 7 {
			return map[string]any{}
		}
		n := g.c.intn(3)
		m := map[string]any{}
		for i := 0; i < n; i++ {
			m[plainStrings[g.c.intn(len(plainStrings))]+fmt.Sprint(i)] = g.value(t.Elem(), depth+1)
		}
		return m
	case ckStruct:
		m := map[string]any{}
		if depth > 7 {
			return m
		}
		names := make([]string, 0, len(ct.fields))
		for name := range ct.fields {
			names = append(names, name)
		}
		sortStrings(names)
		for _, name := range names {
			if g.c.intn(4) != 0 {
				continue
			}
			m[name] = g.value(ct.fields[name].ct.t, depth+1)
		}
		switch g.c.intn(12) {
		case 0:
			m["unknownField"] = "x"
		case 1:
			m["Name"] = "case differs"
		case 2:
			m["-"] = "dash"
		}
		return m
	}
	// Types the walk does not model still get values.
	return ownScalars[g.c.intn(len(ownScalars))]
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// generated returns an object of one of canonKinds.
func (g *canonGen) object(t testing.TB) (reflect.Type, map[string]any) {
	k := canonKinds[g.c.intn(len(canonKinds))]
	typ := canonKindType(t, k.apiVersion, k.kind)
	obj, ok := g.value(typ, 0).(map[string]any)
	if !ok {
		obj = map[string]any{}
	}
	obj["apiVersion"], obj["kind"] = k.apiVersion, k.kind
	return typ, obj
}

// checkAgainstConverter fails when fastRemarshal gives a result that differs
// from the converter's, or changes its input. It reports whether the fast
// way gave a result.
func checkAgainstConverter(t *testing.T, typ reflect.Type, obj map[string]any) bool {
	t.Helper()
	before := drift.DeepCopy(obj)
	fast, ok := fastRemarshal(typ, obj, false)
	shared, sharedOK := fastRemarshal(typ, obj, true)
	if !reflect.DeepEqual(before, obj) {
		t.Fatalf("fastRemarshal changed its input:\nbefore %#v\nafter  %#v", before, obj)
	}
	if ok != sharedOK {
		t.Fatalf("%v: fast way with sharing gave a result: %v, without: %v\nobject %#v", typ, sharedOK, ok, obj)
	}
	if !ok {
		return false
	}
	if !reflect.DeepEqual(fast, shared) {
		t.Fatalf("%v: results with and without sharing differ\nobject %#v\nfresh  %#v\nshared %#v", typ, obj, fast, shared)
	}
	if p, found := sharedContainer(obj, fast); found {
		t.Fatalf("%v: the result without sharing shares %s with the input", typ, p)
	}
	b := builtins()
	for _, strict := range []bool{false, true} {
		slow, slowOK := b.remarshalConverted(typ, drift.DeepCopy(obj).(map[string]any), strict)
		if !slowOK {
			t.Fatalf("%v strict=%v: the fast way gave a result where the converter failed\nobject %#v\nfast   %#v", typ, strict, obj, fast)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%v strict=%v: results differ\nobject %#v\nfast   %#v\nslow   %#v", typ, strict, obj, fast, slow)
		}
	}
	return true
}

// sharedContainer finds a map or list of in that out holds too.
func sharedContainer(in, out any) (string, bool) {
	seen := map[uintptr]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			seen[reflect.ValueOf(x).Pointer()] = true
			for _, e := range x {
				collect(e)
			}
		case []any:
			if len(x) > 0 {
				seen[reflect.ValueOf(x).Pointer()] = true
			}
			for _, e := range x {
				collect(e)
			}
		}
	}
	collect(in)
	var find func(v any, path string) (string, bool)
	find = func(v any, path string) (string, bool) {
		switch x := v.(type) {
		case map[string]any:
			if seen[reflect.ValueOf(x).Pointer()] {
				return path, true
			}
			for k, e := range x {
				if p, ok := find(e, path+"/"+k); ok {
					return p, true
				}
			}
		case []any:
			if len(x) > 0 && seen[reflect.ValueOf(x).Pointer()] {
				return path, true
			}
			for i, e := range x {
				if p, ok := find(e, fmt.Sprintf("%s/%d", path, i)); ok {
					return p, true
				}
			}
		}
		return "", false
	}
	return find(out, "")
}

// TestFastRemarshalMatchesConverter runs the comparison on generated
// objects and on the hand-picked cases below, and checks that the fast way
// does give a result for most of them (a test where it always gave up would
// prove nothing).
func TestFastRemarshalMatchesConverter(t *testing.T) {
	fastCount, total := 0, 0
	for seed := int64(0); seed < 3000; seed++ {
		g := &canonGen{c: randChooser{rand.New(rand.NewSource(seed))}}
		typ, obj := g.object(t)
		total++
		if checkAgainstConverter(t, typ, obj) {
			fastCount++
		}
	}
	if fastCount*3 < total {
		t.Errorf("the fast way gave a result for %d of %d generated objects; want at least a third", fastCount, total)
	}
	t.Logf("fast way: %d of %d generated objects", fastCount, total)

	tests := []struct {
		name       string
		apiVersion string
		kind       string
		obj        map[string]any
		fast       bool // the fast way is expected to give a result
	}{
		{"quantities in other spellings", "v1", "Pod", map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "a", "resources": map[string]any{"limits": map[string]any{"cpu": "0.5", "memory": int64(1) << 30}, "requests": map[string]any{"cpu": float64(0.25)}}},
		}}}, true},
		{"int-or-string port as number and string", "v1", "Service", map[string]any{"spec": map[string]any{"ports": []any{
			map[string]any{"port": int64(80), "targetPort": "http"}, map[string]any{"port": float64(443), "targetPort": int64(8443)},
		}}}, true},
		{"omitempty zero values and nulls", "apps/v1", "Deployment", map[string]any{"metadata": map[string]any{"name": "d", "labels": map[string]any{}, "creationTimestamp": nil},
			"spec": map[string]any{"replicas": int64(0), "paused": false, "strategy": nil, "template": map[string]any{"spec": map[string]any{"containers": []any{}}}}}, true},
		{"unknown fields are dropped", "v1", "ConfigMap", map[string]any{"metadata": map[string]any{"name": "c", "bogus": "x"}, "data": map[string]any{"a": "b"}, "extra": int64(1)}, true},
		{"secret data in base64", "v1", "Secret", map[string]any{"data": map[string]any{"a": "aGk=\n", "b": "", "c": nil}}, true},
		{"a bad quantity leaves it to the converter", "v1", "ResourceQuota", map[string]any{"spec": map[string]any{"hard": map[string]any{"cpu": "lots"}}}, false},
		{"a string in a number field leaves it to the converter", "apps/v1", "Deployment", map[string]any{"spec": map[string]any{"replicas": "3"}}, false},
		{"a fractional number in an integer field leaves it to the converter", "apps/v1", "Deployment", map[string]any{"spec": map[string]any{"replicas": float64(2.5)}}, false},
		{"a time with an offset", "v1", "Pod", map[string]any{"metadata": map[string]any{"creationTimestamp": "2024-01-01T01:00:00+01:00"}}, true},
		{"a CRD schema with defaults", "apiextensions.k8s.io/v1", "CustomResourceDefinition", map[string]any{"spec": map[string]any{"versions": []any{
			map[string]any{"name": "v1", "served": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "default": map[string]any{"a": float64(1)}}}},
		}}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ := canonKindType(t, tc.apiVersion, tc.kind)
			tc.obj["apiVersion"], tc.obj["kind"] = tc.apiVersion, tc.kind
			if got := checkAgainstConverter(t, typ, tc.obj); got != tc.fast {
				t.Errorf("fast way gave a result: %v, want %v", got, tc.fast)
			}
		})
	}
}

// FuzzFastRemarshal compares the fast way with the converter on objects the
// fuzzer's bytes choose.
func FuzzFastRemarshal(f *testing.F) {
	for _, s := range []string{"", "\x01\x00\x05\x00\x07\x00", "\xff\xff\x03\x00\x00\x00\x09\x00\x02\x00\x11\x00"} {
		f.Add([]byte(s))
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		b := make([]byte, 64+r.Intn(400))
		r.Read(b)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &canonGen{c: &byteChooser{data: data}}
		typ, obj := g.object(t)
		checkAgainstConverter(t, typ, obj)
		checkFits(t, typ, obj)
	})
}
