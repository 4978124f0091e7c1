package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	"github.com/argoproj/argo-cd/v3/applicationset/utils"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/git"

	"github.com/driftfix/driftfix/bot/appset"
	"github.com/driftfix/driftfix/bot/drift"
)

// appsetNamespace is the namespace the generated ApplicationSets live in,
// Argo CD's own.
const appsetNamespace = "argocd"

// checkoutRepos is Argo CD's repository service over real Git checkouts,
// one per repository URL: files listed by Argo CD's Git client (git
// ls-files with the pattern as a pathspec), directories walked as the repo
// server walks them.
type checkoutRepos struct {
	roots map[string]string // repoURL -> checkout
}

func (c *checkoutRepos) root(repoURL string) (string, error) {
	r, ok := c.roots[repoURL]
	if !ok {
		return "", fmt.Errorf("repository %s not found", repoURL)
	}
	return r, nil
}

func (c *checkoutRepos) GetFiles(ctx context.Context, repoURL, _, _, pattern string, _ bool, _ *v1alpha1.SourceIntegrity) (map[string][]byte, error) {
	root, err := c.root(repoURL)
	if err != nil {
		return nil, err
	}
	gc, err := git.NewClientExt(repoURL, root, git.NopCreds{}, true, false, "", "")
	if err != nil {
		return nil, err
	}
	if pattern == "" {
		pattern = "."
	}
	names, err := gc.LsFiles(ctx, pattern, false)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(root, n))
		if err != nil {
			return nil, err
		}
		out[n] = b
	}
	return out, nil
}

// GetDirectories walks the checkout as the repo server's walkDirectoryTree
// does (hidden directories skipped, the root left out).
func (c *checkoutRepos) GetDirectories(_ context.Context, repoURL, _, _ string, _ bool, _ *v1alpha1.SourceIntegrity) ([]string, error) {
	root, err := c.root(repoURL)
	if err != nil {
		return nil, err
	}
	var paths []string
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if rel != "." {
			paths = append(paths, rel)
		}
		return nil
	})
	return paths, err
}

func (c *checkoutRepos) GetOciFiles(context.Context, string, string, string, string, bool) (map[string][]byte, error) {
	return nil, fmt.Errorf("no OCI")
}

func (c *checkoutRepos) GetOciDirectories(context.Context, string, string, string, bool) ([]string, error) {
	return nil, fmt.Errorf("no OCI")
}

// writeCheckout makes a Git repository of files in dir and commits them.
func writeCheckout(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=o", "-c", "user.email=o@o", "commit", "-q", "-m", "files"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
}

// argoGenerate is Argo CD's ApplicationSet controller generating a set's
// Applications: its generators, GenerateApplications (render and
// templatePatch), then the name checks of validateGeneratedApplications and
// the API server's check of a name.
func argoGenerate(set drift.Object, repos *checkoutRepos, cluster []drift.Object) (apps []v1alpha1.Application, err error) {
	// A panic in a generator (mergo merging a map of any values into a
	// generator's map of strings) fails the reconcile, which
	// controller-runtime recovers.
	defer func() {
		if p := recover(); p != nil {
			apps, err = nil, fmt.Errorf("controller panic: %v", p)
		}
	}()
	b, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	var as v1alpha1.ApplicationSet
	if err := json.Unmarshal(b, &as); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if err := utils.CheckInvalidGenerators(&as); err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	// The projects a cluster holds: default, and the one the template names.
	objs := []client.Object{&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: appsetNamespace}}}
	if p := as.Spec.Template.Spec.Project; p != "" && p != "default" && !strings.Contains(p, "{{") {
		objs = append(objs, &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: p, Namespace: appsetNamespace}})
	}
	for _, o := range cluster {
		cb, _ := json.Marshal(o)
		var s corev1.Secret
		if err := json.Unmarshal(cb, &s); err != nil {
			return nil, err
		}
		s.Namespace = appsetNamespace
		objs = append(objs, &s)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	terminal := map[string]generators.Generator{
		"List":     generators.NewListGenerator(),
		"Clusters": generators.NewClusterGenerator(c, appsetNamespace),
		"Git":      generators.NewGitGenerator(repos, appsetNamespace),
	}
	nested := map[string]generators.Generator{
		"List": terminal["List"], "Clusters": terminal["Clusters"], "Git": terminal["Git"],
		"Matrix": generators.NewMatrixGenerator(terminal), "Merge": generators.NewMergeGenerator(terminal),
	}
	top := map[string]generators.Generator{
		"List": terminal["List"], "Clusters": terminal["Clusters"], "Git": terminal["Git"],
		"Matrix": generators.NewMatrixGenerator(nested), "Merge": generators.NewMergeGenerator(nested),
	}
	apps, _, err = template.GenerateApplications(log.NewEntry(log.StandardLogger()), as, top, &utils.Render{}, c)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, a := range apps {
		if a.Name == "" {
			return nil, fmt.Errorf("an application with no name")
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("duplicate name %s", a.Name)
		}
		seen[a.Name] = true
		if errs := path.IsValidPathSegmentName(a.Name); len(errs) > 0 {
			return nil, fmt.Errorf("name %q: %v", a.Name, errs)
		}
	}
	return apps, nil
}

// comparable is an Application as Argo CD's type reads it: the metadata a
// set renders and the spec, through the type and back to JSON values.
func comparable(a v1alpha1.Application) (any, error) {
	b, err := json.Marshal(map[string]any{
		"name": a.Name, "namespace": a.Namespace, "labels": a.Labels, "annotations": a.Annotations,
		"finalizers": a.Finalizers, "spec": a.Spec,
	})
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	// A nil and an empty map or list of metadata read the same.
	for _, k := range []string{"labels", "annotations", "finalizers"} {
		switch x := v[k].(type) {
		case map[string]any:
			if len(x) == 0 {
				delete(v, k)
			}
		case []any:
			if len(x) == 0 {
				delete(v, k)
			}
		case nil:
			delete(v, k)
		}
	}
	return v, nil
}

func ourComparable(o drift.Object) (any, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var a v1alpha1.Application
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("driftfix's Application does not decode as Argo CD's type: %w", err)
	}
	return comparable(a)
}

// compareSet resolves one generated set both ways; "" when they agree,
// else what differs.
func compareSet(t *testing.T, c AppSetCase) (string, int) {
	repos := &checkoutRepos{roots: map[string]string{}}
	for url, files := range c.Repos {
		dir := t.TempDir()
		writeCheckout(t, dir, files)
		repos.roots[url] = dir
	}
	return compareSetWith(t, c, repos)
}

// compareSetWith is compareSet over checkouts already made.
func compareSetWith(t *testing.T, c AppSetCase, repos *checkoutRepos) (string, int) {
	argo, aerr := argoGenerate(c.Set, repos, c.Cluster)
	opt := appset.Options{
		Files: func(repoURL, _ string) (map[string]string, bool) {
			f, ok := c.Repos[repoURL]
			return f, ok
		},
		Cluster: c.Cluster,
	}
	if c.Declared {
		// Argo CD holds exactly the Secrets the repository declares.
		opt.Cluster, opt.Declared = nil, c.Cluster
	}
	ours, oerr := appset.Resolve(drift.DeepCopy(c.Set).(drift.Object), opt)
	if oerr == nil && len(ours.Unresolved) > 0 {
		return fmt.Sprintf("driftfix left generators unresolved: %+v", ours.Unresolved), 0
	}
	if aerr != nil || oerr != nil {
		if aerr != nil && oerr != nil {
			if os.Getenv("APPSET_ORACLE_ERRORS") != "" {
				t.Logf("both fail:\n argo     %.300v\n driftfix %.300v", aerr, oerr)
			}
			return "", 0
		}
		return fmt.Sprintf("argo error %v / driftfix error %v", aerr, oerr), 0
	}
	if len(argo) != len(ours.Applications) {
		return fmt.Sprintf("argo made %d applications, driftfix %d", len(argo), len(ours.Applications)), 0
	}
	av := map[string]any{}
	for _, a := range argo {
		v, err := comparable(a)
		if err != nil {
			return err.Error(), 0
		}
		av[a.Name] = v
	}
	for _, g := range ours.Applications {
		v, err := ourComparable(g.Application)
		if err != nil {
			return err.Error(), 0
		}
		name := drift.Str(g.Application, "metadata", "name")
		want, ok := av[name]
		if !ok {
			return fmt.Sprintf("driftfix made %s, Argo CD did not", name), 0
		}
		if !reflect.DeepEqual(want, v) {
			wb, _ := json.Marshal(want)
			gb, _ := json.Marshal(v)
			return fmt.Sprintf("%s differs:\n argo     %s\n driftfix %s", name, wb, gb), 0
		}
	}
	return "", len(argo)
}

// TestAppSetOracleDeclaredClusters resolves the generated ApplicationSets
// without a cluster context, their cluster Secrets given as the ones the
// repository declares, against Argo CD holding exactly those Secrets (none,
// in about a quarter of the cases): a clusters generator then makes the
// local cluster's parameters as Argo CD does. A set driftfix leaves
// unresolved must be one whose clusters generator has a selector no
// declared Secret matches.
func TestAppSetOracleDeclaredClusters(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	level := log.GetLevel()
	log.SetLevel(log.PanicLevel)
	t.Setenv("ARGOCD_LOG_LEVEL", "error")
	defer log.SetLevel(level)
	const cases = 300
	agree, clusters, unresolved, apps := 0, 0, 0, 0
	for n := range cases {
		c := GenerateAppSet(11, n)
		c.Declared = true
		if !strings.Contains(c.Class(), "clusters") {
			continue
		}
		clusters++
		res, err := appset.Resolve(drift.DeepCopy(c.Set).(drift.Object), appset.Options{Declared: c.Cluster,
			Files: func(u, _ string) (map[string]string, bool) { f, ok := c.Repos[u]; return f, ok }})
		if err == nil && len(res.Unresolved) > 0 {
			for _, u := range res.Unresolved {
				if !strings.HasSuffix(u.Generator, "clusters") || !strings.Contains(u.Reason, "selector") {
					t.Errorf("case %d: unresolved %+v: only a clusters generator whose selector no declared Secret matches may be", n, u)
				}
			}
			unresolved++
			continue
		}
		if err == nil && len(res.Partial) == 0 && len(res.Applications) > 0 {
			t.Errorf("case %d: a clusters generator resolved without a cluster context is not named partial", n)
		}
		diff, made := compareSet(t, c)
		if diff != "" {
			sb, _ := json.Marshal(c.Set)
			t.Errorf("case %d [%s]: %s\n set %s", n, c.Class(), diff, sb)
			continue
		}
		agree++
		apps += made
	}
	t.Logf("clusters generators without a cluster context: %d of %d generated sets have one; %d agree with Argo CD (%d Applications), %d left unresolved (a selector no declared Secret matches)", agree+unresolved, clusters, agree, apps, unresolved)
	if clusters < 30 {
		t.Errorf("only %d generated sets have a clusters generator", clusters)
	}
}

// appsetOracleCases is how many ApplicationSets TestAppSetOracle generates.
const appsetOracleCases = 600

// TestAppSetOracle generates ApplicationSets (list elements of random keys
// and values, git directories and files over a generated repository,
// clusters from generated cluster Secrets, matrix and merge nested, goTemplate
// on and off, per-generator templates, selectors, values, templatePatch) and
// checks bot/appset resolves each to the Applications Argo CD's own
// generators, renderer and template patch make, or fails where Argo CD fails.
func TestAppSetOracle(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// Argo CD's generators log each error they return, and its Git client
	// traces each command.
	level := log.GetLevel()
	log.SetLevel(log.PanicLevel)
	t.Setenv("ARGOCD_LOG_LEVEL", "error") // its Git client's command traces
	defer log.SetLevel(level)
	agree, produced, apps := 0, 0, 0
	classes := map[string]int{}
	var lines []string
	for n := range appsetOracleCases {
		c := GenerateAppSet(7, n)
		diff, made := compareSet(t, c)
		if diff == "" {
			agree++
			apps += made
			if made > 0 {
				produced++
			}
			continue
		}
		classes[c.Class()]++
		sb, _ := json.Marshal(c.Set)
		lines = append(lines, fmt.Sprintf("case %d [%s]: %s\n set %s", n, c.Class(), diff, sb))
	}
	sort.Strings(lines)
	for i, l := range lines {
		if i < 15 {
			t.Log(l)
		}
	}
	t.Logf("ApplicationSets: agree on %d of %d generated sets (%d made %d Applications, %d failed in both)", agree, appsetOracleCases, produced, apps, agree-produced)
	if agree != appsetOracleCases {
		t.Errorf("bot/appset disagrees with Argo CD on %d of %d generated sets; by class: %v", appsetOracleCases-agree, appsetOracleCases, classes)
	}
}
