package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/audit"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/drift"
)

// auditBatch is what the API server's webhook backend posts: one write of
// Deployment shop/web by a person under Argo CD's manager name.
func auditBatch(at time.Time) string {
	ts := at.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	return `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[{"level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/shop/deployments/web?fieldManager=argocd-controller","verb":"patch","user":{"username":"oidc:alice","groups":["system:authenticated"]},"userAgent":"kubectl/v1.37.0","objectRef":{"resource":"deployments","namespace":"shop","name":"web","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"` + ts + `","stageTimestamp":"` + ts + `"}]}`
}

// TestWithAudit: each snapshot's cluster context gains the writes of its
// objects, after what the cluster read gives, which is left as it was.
func TestWithAudit(t *testing.T) {
	st := audit.NewStore(audit.Options{})
	evs, err := audit.Decode([]byte(auditBatch(time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	st.Add(evs)
	cm := drift.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"}}
	read := make([]drift.Object, 1, 4) // spare capacity the wrapper must not write into
	read[0] = cm
	ins := withAudit([]cycle.Instance{{Name: "main", ReadCluster: func(context.Context) (func(*drift.Snapshot) []drift.Object, error) {
		return func(*drift.Snapshot) []drift.Object { return read }, nil
	}}}, st)
	cluster, err := ins[0].ReadCluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	web := &drift.Snapshot{Resources: []drift.Resource{{Live: drift.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"}}}}}
	got := cluster(web)
	if len(got) != 2 || drift.Str(got[0], "kind") != "ConfigMap" || drift.Str(got[1], "kind") != "EventList" || len(drift.List(got[1], "items")) != 1 {
		t.Fatalf("cluster context %v", got)
	}
	if read[:2][1] != nil {
		t.Fatal("the wrapper wrote into the cluster read's slice")
	}
	other := &drift.Snapshot{Resources: []drift.Resource{{Live: drift.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "api", "namespace": "shop"}}}}}
	if got := cluster(other); len(got) != 1 {
		t.Fatalf("an object nobody wrote got audit events: %v", got)
	}
	if withAudit(ins, nil)[0].ReadCluster == nil {
		t.Fatal("without a store the instances must stay as they are")
	}
}

// TestAuditOfRun: run with --audit-token-file takes the API server's
// batches at POST /audit on --webhook-listen with the token only, follows
// --audit-log-file, and never logs the token.
func TestAuditOfRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts driftfix as a process")
	}
	srv, tokenFile := liveServer(t, time.Now())
	dir := t.TempDir()
	cfg := writePolicy(t, dir, "dryRun: true\naudit: {retention: 30m, maxRecords: 1000}\n", argoEntry{"test", srv.URL, tokenFile, ""})
	auditToken := filepath.Join(dir, "audit-token")
	if err := os.WriteFile(auditToken, []byte("audit-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "audit.log")
	addr, hook := freeAddr(t), freeAddr(t)
	p := startDriftfix(t, "run", "--config", cfg, "--listen", addr, "--webhook-listen", hook, "--audit-token-file", auditToken, "--audit-log-file", logFile)
	client := &http.Client{Timeout: 5 * time.Second}
	post := func(token string) (int, string) {
		req, _ := http.NewRequest("POST", "http://"+hook+"/audit", strings.NewReader(auditBatch(time.Now())))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor(t, "the audit receiver", 20*time.Second, p, func() bool { code, _ := post("audit-s3cret"); return code != 0 })
	if code, body := post("audit-s3cret"); code != http.StatusOK {
		t.Errorf("a batch with the token: %d %q", code, body)
	}
	if code, body := post("guessed"); code != http.StatusUnauthorized {
		t.Errorf("a batch with another token: %d %q", code, body)
	}
	if code, body := post(""); code != http.StatusUnauthorized {
		t.Errorf("a batch without a token: %d %q", code, body)
	}
	if err := os.WriteFile(logFile, []byte("not an event\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the audit log's bad line", 20*time.Second, p, func() bool { return strings.Contains(p.stderr.String(), "audit log line skipped") })
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v; log:\n%s", err, p.stderr.String())
	}
	log := p.stderr.String()
	if !strings.Contains(log, "audit events are read") || !strings.Contains(log, `"paths":"/audit"`) {
		t.Errorf("the log does not say audit events are read at /audit:\n%s", log)
	}
	if strings.Contains(log, "audit-s3cret") {
		t.Error("the audit token appeared in the log")
	}
}
