package fights

import (
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// cycleSnapshot is one cycle's snapshot of a Deployment whose Git declares
// replicas 2 and tier "gold" (an annotation and a label): live holds what
// the given writers last wrote, at time at.
func cycleSnapshot(at time.Time, replicas int, replicasBy, tier, tierBy string) *drift.Snapshot {
	ts := at.Format(time.RFC3339)
	tierFields := map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:example.com/tier": map[string]any{}}, "f:labels": map[string]any{"f:tier": map[string]any{}}}}
	replicaFields := map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}
	mf := []any{
		map[string]any{"manager": tierBy, "operation": "Update", "apiVersion": "apps/v1", "time": ts, "fieldsType": "FieldsV1", "fieldsV1": tierFields},
		map[string]any{"manager": replicasBy, "operation": "Update", "apiVersion": "apps/v1", "time": ts, "fieldsType": "FieldsV1", "fieldsV1": replicaFields},
	}
	obj := func(replicas int, tier string, managed []any) drift.Object {
		md := map[string]any{"name": "web", "namespace": "shop", "annotations": map[string]any{"example.com/tier": tier}, "labels": map[string]any{"tier": tier}}
		if managed != nil {
			md["managedFields"] = managed
		}
		return drift.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
			"spec": map[string]any{"replicas": int64(replicas), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "registry.example.com/web:1"}}}}}}
	}
	return &drift.Snapshot{
		Application: drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": "web", "namespace": "argocd"}},
		Resources:   []drift.Resource{{Target: obj(2, "gold", nil), Live: obj(replicas, tier, mf)}},
	}
}

// cycles observes each snapshot in turn, watching what earlier cycles saw
// (and the keys given), as a bot keeping the writes in its state database does.
func cycles(t *testing.T, snaps []*drift.Snapshot, watch ...Key) []Write {
	t.Helper()
	var all []Write
	for i, s := range snaps {
		ws, err := Observe(s, t0.Add(time.Duration(i)*5*time.Minute), append(watch, Watched(all)...))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ws...)
	}
	return all
}

// TestFightControllerAgainstSelfHeal: an operator writes tier "silver" and
// self-heal writes Git's "gold" back, cycle after cycle. The application is
// Synced in every other cycle, yet the two writers are reported, once, as
// one fight over both paths; no other path is.
func TestFightControllerAgainstSelfHeal(t *testing.T) {
	var snaps []*drift.Snapshot
	for i := 0; i < 8; i++ {
		tier, by := "gold", "argocd-controller"
		if i%2 == 1 {
			tier, by = "silver", "tier-operator"
		}
		snaps = append(snaps, cycleSnapshot(t0.Add(time.Duration(i)*5*time.Minute), 2, "argocd-controller", tier, by))
	}
	fights := Detect(cycles(t, snaps), 0)
	if len(fights) != 1 {
		t.Fatalf("%d fights, want 1: %+v", len(fights), fights)
	}
	f := fights[0]
	if f.Resource.Kind != "Deployment" || f.Resource.Name != "web" || f.Writers != [2]string{"argocd-controller", "tier-operator"} {
		t.Errorf("fight %+v", f)
	}
	if got := strings.Join(f.Paths, " "); got != "/metadata/annotations/example.com~1tier /metadata/labels/tier" {
		t.Errorf("fight over %s", got)
	}
	// first seen differing in cycle 1; flips in cycles 2..7
	if f.Flips != 6 || !f.First.Equal(t0.Add(5*time.Minute)) || !f.Latest.Equal(t0.Add(35*time.Minute)) {
		t.Errorf("flips %d from %s to %s", f.Flips, f.First, f.Latest)
	}
	if !f.Last[0].Equal(t0.Add(30*time.Minute)) || !f.Last[1].Equal(t0.Add(35*time.Minute)) {
		t.Errorf("last seen: %v", f.Last)
	}
	// Two turns are not yet a fight.
	if fs := Detect(cycles(t, snaps[:3]), 0); len(fs) != 0 {
		t.Errorf("two turns reported as a fight: %+v", fs)
	}
}

// TestFightNotAScaleEvent: an HPA scaling a Deployment once, or again and
// again on its own, is no fight, though the replicas were watched from the
// cycle Argo CD last wrote them; self-heal writing Git's replicas back each
// time the HPA scales is one.
func TestFightNotAScaleEvent(t *testing.T) {
	replicas := Key{drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, "/spec/replicas"}
	tests := []struct {
		name     string
		replicas []int
		by       []string // "a" argocd-controller, "k" kube-controller-manager
		fight    bool
	}{
		{"one scale event", []int{2, 5, 5, 5, 5, 5}, []string{"a", "k", "k", "k", "k", "k"}, false},
		{"the HPA scaling up and down", []int{2, 5, 6, 7, 6, 5, 6}, []string{"a", "k", "k", "k", "k", "k", "k"}, false},
		{"self-heal against the HPA", []int{2, 5, 2, 5, 2, 5}, []string{"a", "k", "a", "k", "a", "k"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var snaps []*drift.Snapshot
			for i, r := range tt.replicas {
				by := map[string]string{"a": "argocd-controller", "k": "kube-controller-manager"}[tt.by[i]]
				snaps = append(snaps, cycleSnapshot(t0.Add(time.Duration(i)*5*time.Minute), r, by, "gold", "argocd-controller"))
			}
			ws := cycles(t, snaps, replicas)
			if len(ws) != len(snaps) {
				t.Fatalf("the replicas were observed %d times in %d cycles", len(ws), len(snaps))
			}
			fs := Detect(ws, 0)
			if got := len(fs) == 1 && fs[0].Paths[0] == "/spec/replicas" && fs[0].Writers == [2]string{"argocd-controller", "kube-controller-manager"}; got != tt.fight || (!tt.fight && len(fs) > 0) {
				t.Errorf("fights %+v, want a fight: %v", fs, tt.fight)
			}
		})
	}
}

// TestFightObserveKeepsNoValue: what is kept is a fingerprint, never the value.
func TestFightObserveKeepsNoValue(t *testing.T) {
	ws, err := Observe(cycleSnapshot(t0, 2, "argocd-controller", "silver", "tier-operator"), t0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 {
		t.Fatalf("%d writes, want the two differing paths: %+v", len(ws), ws)
	}
	for _, w := range ws {
		if strings.Contains(w.Value, "silver") || w.Manager != "tier-operator" || len(w.Value) != 16 {
			t.Errorf("write %+v", w)
		}
	}
}
