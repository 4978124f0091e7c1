package audit

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/proccpu"
)

func decodeOne(t testing.TB, doc string) []auditv1.Event {
	t.Helper()
	evs, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

var web = Key{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web"}

// TestRetention: a write older than the retention is not kept, and a kept
// write is dropped once the retention passes it.
func TestRetention(t *testing.T) {
	c := &clock{t0}
	s := NewStore(Options{Retention: time.Hour, Now: c.Now})
	if n := s.Add(decodeOne(t, event(1, "oidc:alice", "patch", "deployments", "shop", "web", "", "", t0.Add(-2*time.Hour)))); n != 0 {
		t.Fatalf("kept a write older than the retention")
	}
	if st := s.Stats(); st.Skipped[SkipTooOld] != 1 {
		t.Fatalf("stats %+v", st)
	}
	s.Add(decodeOne(t, event(2, "oidc:alice", "patch", "deployments", "shop", "web", "", "", t0.Add(-30*time.Minute))))
	s.Add(decodeOne(t, event(3, "oidc:bob", "patch", "deployments", "shop", "web", "", "", t0.Add(-time.Minute))))
	if got := s.Writes(web); len(got) != 2 || got[0].User.User != "oidc:alice" || got[1].User.User != "oidc:bob" {
		t.Fatalf("writes %+v", got)
	}
	c.now = t0.Add(40 * time.Minute)
	if got := s.Writes(web); len(got) != 1 || got[0].User.User != "oidc:bob" {
		t.Fatalf("after 40 minutes: writes %+v", got)
	}
	c.now = t0.Add(2 * time.Hour)
	if got := s.Writes(web); len(got) != 0 {
		t.Fatalf("after the retention: writes %+v", got)
	}
	if st := s.Stats(); st.Records != 0 || st.Bytes != 0 || st.Evicted != 2 {
		t.Fatalf("stats after the retention: %+v", st)
	}
}

// TestPerObject: an object written more often than its bound keeps its
// newest writes.
func TestPerObject(t *testing.T) {
	s := NewStore(Options{PerObject: 3, Now: func() time.Time { return t0.Add(time.Hour) }})
	for i := range 5 {
		s.Add(decodeOne(t, event(i, fmt.Sprintf("user-%d", i), "patch", "deployments", "shop", "web", "", "", t0.Add(time.Duration(i)*time.Second))))
	}
	got := s.Writes(web)
	if len(got) != 3 || got[0].User.User != "user-2" || got[2].User.User != "user-4" {
		t.Fatalf("writes %+v", got)
	}
}

// TestSetOptions: a smaller bound from a changed policy drops the oldest
// at once.
func TestSetOptions(t *testing.T) {
	s := NewStore(Options{Now: func() time.Time { return t0.Add(time.Hour) }})
	for i := range 10 {
		s.Add(decodeOne(t, event(i, "oidc:alice", "patch", "deployments", "shop", fmt.Sprintf("web-%d", i), "", "", t0.Add(time.Duration(i)*time.Second))))
	}
	s.SetOptions(Options{MaxRecords: 4})
	if st := s.Stats(); st.Records != 4 {
		t.Fatalf("stats %+v", st)
	}
	if len(s.Writes(Key{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web-5"})) != 0 ||
		len(s.Writes(Key{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web-6"})) != 1 {
		t.Fatal("the oldest were not the ones dropped")
	}
}

// TestBoundedMemory: a flood of writes to many objects stays within the
// store's bounds on records and bytes, and the process's heap with it.
func TestBoundedMemory(t *testing.T) {
	const maxRecords, maxBytes = 5_000, 2 << 20
	now := t0.Add(time.Hour)
	s := NewStore(Options{MaxRecords: maxRecords, MaxBytes: maxBytes, Now: func() time.Time { return now }})
	batch := make([]string, 0, 100)
	flush := func() {
		s.Add(decodeOne(t, `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[`+strings.Join(batch, ",")+`]}`))
		batch = batch[:0]
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 60_000 {
		batch = append(batch, event(i, fmt.Sprintf("oidc:user-%d", i%50), "patch", "deployments", fmt.Sprintf("ns-%d", i%97), fmt.Sprintf("web-%d", i), "", "fieldManager=kubectl-edit", t0.Add(time.Duration(i)*time.Millisecond)))
		if len(batch) == cap(batch) {
			flush()
		}
		if i%10_000 == 0 {
			if st := s.Stats(); st.Records > maxRecords || st.Bytes > maxBytes {
				t.Fatalf("after %d events the store holds %d records, %d bytes", i, st.Records, st.Bytes)
			}
		}
	}
	st := s.Stats()
	if st.Records > maxRecords || st.Bytes > maxBytes || st.Kept != 60_000 || st.Evicted < 55_000 {
		t.Fatalf("stats %+v", st)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The bytes the store counts are an estimate; the heap it really
	// holds stays within twice them.
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 2*maxBytes {
		t.Errorf("the heap grew by %d bytes holding %d records (bound %d bytes)", grown, st.Records, maxBytes)
	}
	// The newest writes are the ones kept.
	last := 60_000 - 1
	if len(s.Writes(Key{Group: "apps", Resource: "deployments", Namespace: fmt.Sprintf("ns-%d", last%97), Name: fmt.Sprintf("web-%d", last)})) != 1 {
		t.Error("the newest write was dropped")
	}
	runtime.KeepAlive(s)
}

// TestContext: the snapshot's objects get their writes, named by resource
// as a CRD says or as Kubernetes guesses; other objects' writes stay out.
func TestContext(t *testing.T) {
	s := NewStore(Options{Now: func() time.Time { return t0.Add(time.Hour) }})
	s.Add(decodeOne(t, event(1, "oidc:alice", "patch", "deployments", "shop", "web", "", "", t0)))
	s.Add(decodeOne(t, event(2, "oidc:alice", "patch", "deployments", "shop", "other", "", "", t0)))
	s.Add(decodeOne(t, strings.ReplaceAll(event(3, "oidc:carol", "patch", "certs", "shop", "tls", "", "", t0), `"apiGroup":"apps"`, `"apiGroup":"cert-manager.io"`)))
	s.Add(decodeOne(t, strings.ReplaceAll(event(4, "oidc:carol", "update", "ingresses", "shop", "web", "", "", t0), `"apiGroup":"apps"`, `"apiGroup":"networking.k8s.io"`)))
	obj := func(apiVersion, kind, name string) drift.Object {
		return drift.Object{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": "shop"}}
	}
	snap := &drift.Snapshot{
		Resources: []drift.Resource{{Live: obj("apps/v1", "Deployment", "web")}, {Target: obj("cert-manager.io/v1", "Certificate", "tls")}, {Live: obj("networking.k8s.io/v1", "Ingress", "web")}},
		Cluster: []drift.Object{{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "certs.cert-manager.io"},
			"spec": map[string]any{"group": "cert-manager.io", "names": map[string]any{"kind": "Certificate", "plural": "certs"}}}},
	}
	o := s.Context(snap)
	if o == nil || drift.Str(o, "metadata", "name") != ContextName {
		t.Fatalf("context %v", o)
	}
	var got []string
	for _, it := range drift.List(o, "items") {
		got = append(got, drift.Str(it, "objectRef", "resource")+"/"+drift.Str(it, "objectRef", "name")+" "+drift.Str(it, "user", "username"))
	}
	if want := "deployments/web oidc:alice|certs/tls oidc:carol|ingresses/web oidc:carol"; strings.Join(got, "|") != want {
		t.Errorf("context items %q, want %q", strings.Join(got, "|"), want)
	}
	if s.Context(&drift.Snapshot{Resources: []drift.Resource{{Live: obj("v1", "ConfigMap", "none")}}}) != nil {
		t.Error("a context for objects nobody wrote")
	}
}

// BenchmarkAuditIngest feeds the store batches of 100 Metadata-level
// events, as the webhook backend posts them, and reports the process's CPU
// per event, the share of one core 1,000 events a second take, the heap
// the kept writes hold per record and what reading allocates per event.
func BenchmarkAuditIngest(b *testing.B) {
	const perBatch = 100
	batches := make([][]byte, 50)
	for i := range batches {
		items := make([]string, perBatch)
		for j := range items {
			n := i*perBatch + j
			items[j] = event(n, fmt.Sprintf("system:serviceaccount:ns-%d:controller", n%40), "patch", "deployments", fmt.Sprintf("ns-%d", n%40), fmt.Sprintf("web-%d", n%900), "status", "", t0.Add(time.Duration(n)*time.Millisecond))
		}
		batches[i] = []byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[` + strings.Join(items, ",") + `]}`)
	}
	now := t0.Add(time.Minute)
	s := NewStore(Options{Now: func() time.Time { return now }})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	start, cpu0 := time.Now(), proccpu.Used()
	events := 0
	for i := 0; i < b.N; i++ {
		evs, err := Decode(batches[i%len(batches)])
		if err != nil {
			b.Fatal(err)
		}
		s.Add(evs)
		events += len(evs)
	}
	elapsed, cpu := time.Since(start), proccpu.Used()-cpu0
	b.StopTimer()
	if cpu <= 0 {
		cpu = elapsed // no CPU clock here: wall time
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := s.Stats()
	// CPU is the process's (the garbage collector's included), so a busy
	// machine does not inflate it as it does wall time.
	perEvent := float64(cpu.Nanoseconds()) / float64(events)
	b.ReportMetric(perEvent, "cpu-ns/event")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(events), "wall-ns/event")
	b.ReportMetric(perEvent*1000/1e9*100, "%core-at-1000/s")
	if st.Records > 0 {
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(st.Records), "heap-B/record")
	}
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(events), "alloc-B/event")
	runtime.KeepAlive(s)
}
