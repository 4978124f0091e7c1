//go:build e2e

package e2e

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/audit"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/bot/pipeline"
)

// auditListen is where up.sh's audit webhook kubeconfig sends the API
// server's batches.
const auditListen = "127.0.0.1:9471"

// startAudit serves driftfix's audit receiver where the API server sends
// its audit events, with the stack's token, until the test ends.
func startAudit(t *testing.T, s *stack) *audit.Store {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(s.root, "run", "audit-token"))
	if err != nil {
		t.Fatalf("the stack has no audit webhook (an up.sh older than the audit scenarios?): %v", err)
	}
	store := audit.NewStore(audit.Options{})
	mux := http.NewServeMux()
	mux.Handle("/audit", &audit.Handler{Token: func() string { return string(tok) }, Store: store})
	ln, err := net.Listen("tcp", auditListen)
	if err != nil {
		t.Fatalf("listen for the API server's audit events: %v", err)
	}
	// The API server sends its token only over TLS: the receiver serves
	// the stack's webhook certificate, as driftfix run does with
	// --audit-tls-cert-file.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	pki := filepath.Join(s.root, "run", "pki")
	go srv.ServeTLS(ln, filepath.Join(pki, "webhook.crt"), filepath.Join(pki, "webhook.key"))
	t.Cleanup(func() { srv.Close() })
	return store
}

// waitWrite waits until the API server's audit events name a write of key
// by user.
func waitWrite(t *testing.T, store *audit.Store, key audit.Key, user, sub string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		for _, w := range store.Writes(key) {
			if w.User.User == user && w.Subresource == sub {
				return
			}
		}
	}
	t.Fatalf("the API server's audit events never named %s's write of %s (store: %+v)", user, key, store.Stats())
}

// diagnoseAudited is diagnose with the audit store's events of the
// snapshot's objects in its cluster context, as driftfix run adds them;
// it returns the report without them too.
func (s *stack) diagnoseAudited(t *testing.T, name string, store *audit.Store) (with, without *drift.Report) {
	t.Helper()
	ctx := context.Background()
	settings, err := s.argo.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.argo.Snapshot(ctx, "argocd", name, argocd.SnapshotOptions{Settings: &settings})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: s.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kube.Read(ctx, rc, kube.Config{})
	if err != nil {
		t.Fatal(err)
	}
	collect.AddClusterContext(snap, cl.For(snap))
	src := drift.Sources(snap.Application)[0]
	if snap.Repo.Files, err = gitrepo.Files(ctx, src.RepoURL, drift.Str(snap.Application, "status", "sync", "revision"), gitrepo.Limits{}); err != nil {
		t.Fatal(err)
	}
	if without, err = pipeline.Diagnose(snap, drift.Sensitivity{}); err != nil {
		t.Fatal(err)
	}
	o := store.Context(snap)
	if o == nil {
		t.Fatal("the audit store holds no write of the application's objects")
	}
	collect.AddClusterContext(snap, []drift.Object{o})
	s.last = snap
	if with, err = pipeline.Diagnose(snap, drift.Sensitivity{}); err != nil {
		t.Fatal(err)
	}
	return with, without
}

// finding returns the report's finding at kind and path.
func finding(t *testing.T, rep *drift.Report, kind, path string) drift.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Resource.Kind == kind && f.Path.String() == path {
			return f
		}
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Resource.Kind+" "+f.Path.String()+" "+string(f.Cause))
	}
	t.Fatalf("no finding at %s %s; findings: %q", kind, path, got)
	return drift.Finding{}
}

const settingsConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: normal
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: limits
data:
  level: info
`

// TestAuditImpersonation: a person (client certificate user alice) writes
// under Argo CD's field manager name and under the controller manager's,
// with kubectl --field-manager, and the cluster admin writes as the
// autoscaler's service account (kubectl --as) under Argo CD's name. The
// API server sends its audit events to driftfix's receiver; with them
// driftfix names each write a manual change by the person who sent it and
// says the manager names are contradicted, where the names alone say
// nothing (Argo CD's) or a controller (the controller manager's).
func TestAuditImpersonation(t *testing.T) {
	s := newStack(t)
	store := startAudit(t, s)
	ns := "e2e-audit"
	repo := gitRepo(t, map[string]string{"app/deployment.yaml": deployment, "app/configmap.yaml": settingsConfigMap})
	s.application(t, "e2e-audit", repo, "app", ns, "")
	s.kubectl(t, "", "-n", ns, "create", "rolebinding", "alice-edit", "--clusterrole=edit", "--user=alice")
	s.kubectl(t, "", "-n", ns, "create", "rolebinding", "hpa-edit", "--clusterrole=edit", "--serviceaccount=kube-system:horizontal-pod-autoscaler")
	// Argo CD's own sync wrote under argocd-controller just now: a person's
	// write in the same seconds would leave two identities for one entry.
	time.Sleep(3 * time.Second)
	alice := filepath.Join(s.root, "run", "kubeconfig-alice")
	s.kubectl(t, "", "--kubeconfig", alice, "-n", ns, "patch", "configmap", "settings", "--type=merge",
		"-p", `{"data":{"mode":"debug"}}`, "--field-manager=argocd-controller")
	s.kubectl(t, "", "--kubeconfig", alice, "-n", ns, "patch", "deployment", "web", "--subresource=scale", "--type=merge",
		"-p", `{"spec":{"replicas":5}}`, "--field-manager=kube-controller-manager")
	// The cluster admin (client certificate user admin) acting as the
	// autoscaler's service account, under Argo CD's name: the one who sent
	// the request is a person.
	s.kubectl(t, "", "-n", ns, "patch", "configmap", "limits", "--type=merge", "-p", `{"data":{"level":"debug"}}`,
		"--field-manager=argocd-controller", "--as=system:serviceaccount:kube-system:horizontal-pod-autoscaler")
	s.waitFor(t, "e2e-audit", func(a argocd.AppSummary) bool { return a.SyncStatus == "OutOfSync" }, "OutOfSync after alice's writes")
	waitWrite(t, store, audit.Key{Resource: "configmaps", Namespace: ns, Name: "settings"}, "alice", "")
	waitWrite(t, store, audit.Key{Group: "apps", Resource: "deployments", Namespace: ns, Name: "web"}, "alice", "scale")
	waitWrite(t, store, audit.Key{Resource: "configmaps", Namespace: ns, Name: "limits"}, "admin", "")

	var with, without *drift.Report
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		with, without = s.diagnoseAudited(t, "e2e-audit", store)
		if len(with.Findings) >= 3 {
			break
		}
	}
	for _, c := range []struct {
		kind, path, manager, claimed string
		nameAlone                    drift.Cause
		who, groups                  string
	}{
		{"ConfigMap", "/data/mode", "argocd-controller", "Argo CD's application controller", drift.CauseUnknown, "alice", "e2e-people, system:authenticated"},
		{"Deployment", "/spec/replicas", "kube-controller-manager", "the name of", drift.CauseControllerWrite, "alice", "e2e-people, system:authenticated"},
		{"ConfigMap", "/data/level", "argocd-controller", "Argo CD's application controller", drift.CauseUnknown,
			"admin as system:serviceaccount:kube-system:horizontal-pod-autoscaler", "system:masters, system:authenticated"},
	} {
		if got := finding(t, without, c.kind, c.path).Cause; got != c.nameAlone {
			t.Errorf("%s %s without the audit log: cause %s, want %s (what the manager name alone says)", c.kind, c.path, got, c.nameAlone)
		}
		f := finding(t, with, c.kind, c.path)
		if f.Cause != drift.CauseManualChange {
			t.Errorf("%s %s: cause %s, want manual-change; evidence %q", c.kind, c.path, f.Cause, drift.EvidenceTexts(f.Evidence))
			continue
		}
		var named, contradicted bool
		for _, e := range f.Evidence {
			if e.Kind != drift.EvidenceAudit {
				continue
			}
			named = named || (e.Detail == c.who && e.Manager == c.manager && strings.Contains(e.Text, c.who+" (groups "+c.groups+")"))
			contradicted = contradicted || (strings.Contains(e.Text, c.claimed) && strings.Contains(e.Text, "the authenticated identity contradicts"))
		}
		if !named || !contradicted {
			t.Errorf("%s %s: the audit evidence does not name %s under %s and the contradicted name: %q", c.kind, c.path, c.who, c.manager, drift.EvidenceTexts(f.Evidence))
		}
		if f.Remediation.Kind != drift.FixNone {
			t.Errorf("%s %s: fix %s, want none (a person's change is never handed over)", c.kind, c.path, f.Remediation.Kind)
		}
		t.Logf("%s %s: %s\n  %s", c.kind, c.path, f.Cause, drift.EvidenceText(f.Evidence, "\n  "))
	}
}
