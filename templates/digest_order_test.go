package templates

import (
	"reflect"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestGatherPeople: a digest's lines left for people come out in one order
// whatever order the applications were planned in: by application, then
// resource and path, equal lines keeping their order.
func TestGatherPeople(t *testing.T) {
	line := func(app, path string) PersonLine {
		return PersonLine{Instance: "main", Namespace: "argocd", App: app, Resource: drift.Ref{Kind: "Deployment", Name: app}, Path: path}
	}
	a1, a2, b1, c1 := line("a", "/spec/a1"), line("a", "/spec/a2"), line("b", "/spec/b1"), line("c", "/spec/c1")
	for _, tc := range []struct {
		name   string
		groups [][]PersonLine
		want   []PersonLine
	}{
		{"no lines", [][]PersonLine{nil, {}}, nil},
		{"one group per application, out of order", [][]PersonLine{{c1}, nil, {a1, a2}, {b1}}, []PersonLine{a1, a2, b1, c1}},
		{"a group of two applications", [][]PersonLine{{c1, a2}, {b1}, {a1}}, []PersonLine{a1, a2, b1, c1}},
		{"one application in two groups", [][]PersonLine{{a2}, {b1}, {a1}}, []PersonLine{a1, a2, b1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GatherPeople(tc.groups); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
