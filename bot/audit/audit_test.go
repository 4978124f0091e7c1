package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

// t0 is the time of the first event of testdata/batch.json.
var t0 = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func readBatch(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/batch.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// micro is the API server's time format (metav1.RFC3339Micro).
const micro = "2006-01-02T15:04:05.000000Z07:00"

// event returns one audit event in the API's JSON.
func event(id int, user, verb, resource, ns, name, sub, query string, at time.Time) string {
	uri := "/apis/apps/v1/namespaces/" + ns + "/" + resource + "/" + name
	if sub != "" {
		uri += "/" + sub
	}
	if query != "" {
		uri += "?" + query
	}
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-%d","stage":"ResponseComplete","requestURI":%q,"verb":%q,"user":{"username":%q,"groups":["system:authenticated"]},"sourceIPs":["10.0.0.1"],"userAgent":"kubectl/v1.37.0 (linux/amd64) kubernetes/0e1a2b3","objectRef":{"resource":%q,"namespace":%q,"name":%q,"apiGroup":"apps","apiVersion":"v1","subresource":%q},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":%q,"stageTimestamp":%q}`,
		id, uri, verb, user, resource, ns, name, sub, at.UTC().Format(micro), at.Add(10*time.Millisecond).UTC().Format(micro))
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, doc string
		events    int
		err       string
	}{
		{"an EventList, as the webhook backend posts", string(readBatch(t)), 8, ""},
		{"one Event, as the log backend writes a line", event(1, "oidc:alice", "patch", "deployments", "shop", "web", "", "", t0), 1, ""},
		{"an empty EventList", `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[]}`, 0, ""},
		{"the beta version", `{"kind":"EventList","apiVersion":"audit.k8s.io/v1beta1","items":[]}`, 0, `apiVersion "audit.k8s.io/v1beta1"`},
		{"another kind", `{"kind":"Pod","apiVersion":"audit.k8s.io/v1"}`, 0, `kind "Pod"`},
		{"not JSON", `level=Metadata verb=patch`, 0, "not an audit.k8s.io/v1 Event or EventList in JSON"},
		{"a mistyped field", `{"kind":"Event","apiVersion":"audit.k8s.io/v1","verb":7}`, 0, "not an audit.k8s.io/v1 Event or EventList in JSON"},
		{"empty", "  \n", 0, "empty document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := Decode([]byte(tt.doc))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != tt.events {
				t.Fatalf("%d events, want %d", len(evs), tt.events)
			}
		})
	}
}

// TestRecordOf: only successful writes of an object, no dry run, no
// subresource that carries commands, are kept; what is kept is the
// identity, the agent, the manager, the verb and the times.
func TestRecordOf(t *testing.T) {
	evs, err := Decode(readBatch(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		skip, user, manager, sub string
		impersonated             string
	}{
		{"", "oidc:alice", "argocd-controller", "", ""},
		{"", "system:serviceaccount:kube-system:horizontal-pod-autoscaler", "kube-controller-manager", "scale", ""},
		{SkipStage, "", "", "", ""},
		{SkipDryRun, "", "", "", ""},
		{"", "kubernetes-admin", "kubectl-edit", "", "system:serviceaccount:shop:deployer"},
		{SkipSub, "", "", "", ""},
		{SkipFailed, "", "", "", ""},
		{SkipVerb, "", "", "", ""},
	}
	for i, w := range want {
		r, skip := RecordOf(&evs[i])
		if skip != w.skip {
			t.Errorf("event %d: skipped for %q, want %q", i, skip, w.skip)
			continue
		}
		if skip != "" {
			continue
		}
		if r.User.User != w.user || r.Manager() != w.manager || r.Subresource != w.sub {
			t.Errorf("event %d: user %q manager %q subresource %q, want %q %q %q", i, r.User.User, r.Manager(), r.Subresource, w.user, w.manager, w.sub)
		}
		if got := ""; r.Impersonated != nil {
			got = r.Impersonated.User
			if got != w.impersonated {
				t.Errorf("event %d: impersonated %q, want %q", i, got, w.impersonated)
			}
		} else if w.impersonated != "" {
			t.Errorf("event %d: impersonation lost", i)
		}
	}
	r, _ := RecordOf(&evs[0])
	if !r.Received.Equal(t0.Add(120*time.Millisecond)) || !r.Completed.Equal(t0.Add(150*time.Millisecond)) || r.Verb != "patch" ||
		r.Key != (Key{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web"}) || len(r.User.Groups) != 2 {
		t.Errorf("record %+v", r)
	}
}

// TestNothingSecretKept: bodies, annotations, a credential's extra
// attributes, source addresses and an exec's command never reach what the
// store hands on.
func TestNothingSecretKept(t *testing.T) {
	c := &clock{t0.Add(time.Minute)}
	s := NewStore(Options{Now: c.Now})
	evs, err := Decode(readBatch(t))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Add(evs); n != 3 {
		t.Fatalf("kept %d writes, want 3", n)
	}
	snap := &drift.Snapshot{Resources: []drift.Resource{
		{Live: drift.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"}}},
		{Live: drift.Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "shop"}}},
		{Live: drift.Object{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "web-1", "namespace": "shop"}}},
	}}
	o := s.Context(snap)
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"TOPSECRET", "VE9QU0VDUkVULUJPRFk", "JTI=", "10.0.0.7", "authorization.k8s.io", "c1d2"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the store hands on %q: %s", secret, raw)
		}
	}
	// What it keeps: three writes, the impersonation, the manager named.
	for _, kept := range []string{`"impersonatedUser":{"groups":["system:serviceaccounts"],"username":"system:serviceaccount:shop:deployer"}`, `fieldManager=argocd-controller`, `"username":"oidc:alice"`, `"subresource":"scale"`} {
		if !strings.Contains(string(raw), kept) {
			t.Errorf("the store lost %s: %s", kept, raw)
		}
	}
	// It goes into a snapshot's cluster context as any object does.
	snap.Cluster = []drift.Object{o}
	snap.Application = drift.Object{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": "shop"}}
	file, err := json.Marshal(map[string]any{"apiVersion": drift.SnapshotAPIVersion, "kind": "Snapshot", "application": snap.Application,
		"resources": []any{map[string]any{"live": snap.Resources[0].Live}}, "cluster": snap.Cluster})
	if err != nil {
		t.Fatal(err)
	}
	back, err := drift.ParseSnapshot(file)
	if err != nil {
		t.Fatalf("a snapshot with the audit context does not parse: %v", err)
	}
	if len(back.Cluster) != 1 || drift.Str(back.Cluster[0], "kind") != KindEventList || len(drift.List(back.Cluster[0], "items")) != 3 {
		t.Errorf("cluster context read back: %v", back.Cluster)
	}
}

func TestManagerOfUserAgent(t *testing.T) {
	for ua, want := range map[string]string{
		"kubectl-client-side-apply/v1.37.0 (linux/amd64) kubernetes/0e1a2b3":                                                       "kubectl-client-side-apply",
		"kube-controller-manager/v1.37.0 (linux/amd64) kubernetes/0e1a2b3/system:serviceaccount:kube-system:replicaset-controller": "kube-controller-manager",
		"Go-http-client/2.0":            "Go-http-client",
		"":                              "",
		"tab\there/1":                   "tabhere",
		strings.Repeat("a", 200) + "/1": strings.Repeat("a", 128),
	} {
		if got := drift.ManagerOfUserAgent(ua); got != want {
			t.Errorf("drift.ManagerOfUserAgent(%q) = %q, want %q", ua, got, want)
		}
	}
}

// FuzzAuditEvent: whatever a document holds, decoding and keeping it
// never panics, and what is handed on is a Metadata-level EventList that
// holds no body.
func FuzzAuditEvent(f *testing.F) {
	f.Add(readBatch(f))
	f.Add([]byte(event(1, "oidc:alice", "patch", "deployments", "shop", "web", "", "fieldManager=argocd-controller", t0)))
	f.Add([]byte(event(2, "system:serviceaccount:kube-system:horizontal-pod-autoscaler", "update", "deployments", "shop", "web", "scale", "", t0)))
	f.Add([]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"stage":"ResponseComplete","verb":"create","objectRef":{"resource":"x","name":"y"},"requestObject":{"a":1}}]}`))
	f.Add([]byte(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","requestURI":"/?%zz","impersonatedUser":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := Decode(data)
		if err != nil {
			return
		}
		s := NewStore(Options{Now: func() time.Time { return t0 }, Retention: 100 * 365 * 24 * time.Hour, MaxRecords: 50, MaxBytes: 1 << 20})
		s.Add(evs)
		st := s.Stats()
		if st.Records > 50 || st.Bytes > 1<<20 {
			t.Fatalf("bounds passed: %+v", st)
		}
		var keys []Key
		for i := range evs {
			r, skip := RecordOf(&evs[i])
			if skip != "" {
				continue
			}
			if len(r.Path) > maxField || strings.Contains(r.Path, "?") {
				t.Fatalf("path kept with its query or unbounded: %q", r.Path)
			}
			keys = append(keys, r.Key)
		}
		o := s.contextOf(keys)
		if o == nil {
			return
		}
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), `"requestObject"`) || strings.Contains(string(raw), `"responseObject"`) || strings.Contains(string(raw), `"annotations"`) {
			t.Fatalf("a body or annotation handed on: %s", raw)
		}
		back, err := Decode(raw)
		if err != nil {
			t.Fatalf("the context does not read back: %v", err)
		}
		for _, ev := range back {
			if ev.Level != "Metadata" {
				t.Fatalf("level %q handed on", ev.Level)
			}
		}
	})
}
