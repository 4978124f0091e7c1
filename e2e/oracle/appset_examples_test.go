package oracle

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/appset"
	"github.com/driftfix/driftfix/bot/drift"
)

// TestAppSetOracleExamples resolves the ApplicationSets Argo CD ships as
// examples (applicationset/examples in its module) both ways, over the
// files beside them as the argo-cd repository they name, and two cluster
// Secrets. A set bot/appset names as unresolved (an SCM provider, a pull
// request, another repository) is counted apart; every other set must agree.
func TestAppSetOracleExamples(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	if err != nil {
		t.Fatalf("find Argo CD's module: %v", err)
	}
	root := strings.TrimSpace(string(out))
	files := map[string]string{}
	var sets []string
	err = filepath.WalkDir(filepath.Join(root, "applicationset", "examples"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		if bytes.Contains(b, []byte("kind: ApplicationSet")) {
			sets = append(sets, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	level := log.GetLevel()
	log.SetLevel(log.PanicLevel)
	t.Setenv("ARGOCD_LOG_LEVEL", "error") // its Git client's command traces
	defer log.SetLevel(level)
	const url = "https://github.com/argoproj/argo-cd.git"
	dir := t.TempDir()
	writeCheckout(t, dir, files)
	repos := &checkoutRepos{roots: map[string]string{url: dir}}
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	var cluster []drift.Object
	for _, c := range []struct{ name, env string }{{"staging", "staging"}, {"production", "production"}} {
		cluster = append(cluster, drift.Object{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "cluster-" + c.name, "namespace": appsetNamespace,
				"labels": map[string]any{"argocd.argoproj.io/secret-type": "cluster", "environment": c.env, "env": c.env}},
			"data": map[string]any{"name": enc(c.name), "server": enc("https://" + c.name + ".example.com")}})
	}
	total, agree, unresolved, apps := 0, 0, 0, 0
	for _, p := range sets {
		b, _ := os.ReadFile(p)
		for _, doc := range strings.Split(string(b), "\n---") {
			var set drift.Object
			if err := yaml.Unmarshal([]byte(doc), &set); err != nil || drift.Str(set, "kind") != "ApplicationSet" {
				continue
			}
			if drift.Str(set, "metadata", "namespace") == "" {
				set["metadata"].(map[string]any)["namespace"] = appsetNamespace
			}
			total++
			rel, _ := filepath.Rel(root, p)
			ours, oerr := appset.Resolve(drift.DeepCopy(set).(drift.Object), appset.Options{
				Files: func(u, _ string) (map[string]string, bool) {
					if u != url {
						return nil, false
					}
					return files, true
				},
				Cluster: cluster,
			})
			if oerr == nil && len(ours.Unresolved) > 0 {
				unresolved++
				t.Logf("%s %s: unresolved: %s (%s)", rel, drift.Str(set, "metadata", "name"), ours.Unresolved[0].Reason, ours.Unresolved[0].Needs)
				continue
			}
			c := AppSetCase{Set: set, Repos: map[string]map[string]string{url: files}, Cluster: cluster}
			diff, made := compareSetWith(t, c, repos)
			if diff != "" {
				t.Errorf("%s %s: %s", rel, drift.Str(set, "metadata", "name"), diff)
				continue
			}
			agree++
			apps += made
		}
	}
	t.Logf("Argo CD's examples: %d ApplicationSets, %d agree (%d Applications), %d named unresolved", total, agree, apps, unresolved)
	if total < 20 {
		t.Errorf("only %d example ApplicationSets found", total)
	}
}
