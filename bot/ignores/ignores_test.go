package ignores

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

// byName indexes the report's rules by Name.
func byName(t *testing.T, rep *Report) map[string]*Rule {
	t.Helper()
	out := map[string]*Rule{}
	for i := range rep.Rules {
		out[rep.Rules[i].Name()] = &rep.Rules[i]
	}
	return out
}

// paths lists a rule's covered paths as "app resource path differs".
func paths(r *Rule) []string {
	var out []string
	for _, res := range r.Resources {
		for _, p := range res.Paths {
			out = append(out, fmt.Sprintf("%s %s %s %v", res.Application, res.Resource, p.Path, p.Differs))
		}
	}
	return out
}

// TestIgnoreInventoryHiddenPaths checks, per rule, exactly the paths it
// covers now and which of them hide a difference: jsonPointers, jq with
// select, managedFieldsManagers (every field the manager owns, status left
// out only where Argo CD never compares it), argocd-cm rules and compare
// options (what the diff shows once the option is off).
func TestIgnoreInventoryHiddenPaths(t *testing.T) {
	rules := byName(t, inventory(t, "shop.yaml", "platform.yaml"))
	tests := []struct {
		rule string
		want []string
	}{
		{"Application argocd/shop spec.ignoreDifferences[0]", []string{"argocd/shop Deployment shop/web /spec/replicas true"}},
		{"Application argocd/shop spec.ignoreDifferences[1]", []string{"argocd/shop Deployment shop/web /spec/template/spec/containers/0/image true"}},
		{"Application argocd/shop spec.ignoreDifferences[2]", []string{
			"argocd/shop Deployment shop/web /metadata/annotations/deployment.kubernetes.io~1revision false",
			// compareoptions says ignoreResourceStatusField: crd, so a Deployment's status is compared
			"argocd/shop Deployment shop/web /spec/replicas true",
			"argocd/shop Deployment shop/web /status/replicas false",
		}},
		{"Application argocd/shop spec.ignoreDifferences[3]", []string{"argocd/shop Service shop/web /spec/clusterIP false"}},
		{"Application argocd/shop spec.ignoreDifferences[4]", nil},
		{"Application argocd/shop spec.ignoreDifferences[5]", []string{"argocd/shop Secret shop/web-token /data/token true"}},
		{"argocd-cm data.resource.customizations.ignoreDifferences.all", []string{"argocd/shop ConfigMap shop/web-config /metadata/annotations/example.com~1last-seen true"}},
		{"argocd-cm data.resource.customizations.ignoreDifferences.admissionregistration.k8s.io_MutatingWebhookConfiguration", nil},
		{"argocd-cm data.resource.customizations.ignoreResourceUpdates.apps_Deployment", []string{"argocd/shop Deployment shop/web /metadata/annotations/deployment.kubernetes.io~1revision false"}},
		{"argocd-cm resource.compareoptions ignoreAggregatedRoles: true", []string{"argocd/platform ClusterRole monitoring-view /rules true"}},
		{"argocd-cm resource.compareoptions ignoreResourceStatusField: crd", []string{"argocd/platform Gadget platform/probe /status/phase true"}},
	}
	if len(rules) != len(tests) {
		var names []string
		for n := range rules {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Errorf("%d rules, want %d: %s", len(rules), len(tests), strings.Join(names, "; "))
	}
	for _, tt := range tests {
		r, ok := rules[tt.rule]
		if !ok {
			t.Errorf("rule %s missing", tt.rule)
			continue
		}
		if got := paths(r); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s covers:\n%s\nwant:\n%s", tt.rule, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
	all := rules["argocd-cm data.resource.customizations.ignoreDifferences.all"]
	if got := strings.Join(all.Applications, ","); got != "argocd/platform,argocd/shop" {
		t.Errorf("the .all rule applies to applications %s, want both", got)
	}
	if len(all.Resources) != 7 {
		t.Errorf("the .all rule applies to %d resources, want every one of the 7", len(all.Resources))
	}
}

// TestIgnoreInventoryStale finds exactly the rules that hide nothing now:
// one whose paths hold no difference, two that apply to no resource, and an
// ignoreResourceUpdates rule only when none of its paths exists.
func TestIgnoreInventoryStale(t *testing.T) {
	rep := inventory(t, "shop.yaml", "platform.yaml")
	var stale []string
	for i := range rep.Rules {
		if rep.Rules[i].Stale {
			stale = append(stale, rep.Rules[i].Name()+": "+rep.Rules[i].StaleWhy)
		}
	}
	want := []string{
		"Application argocd/shop spec.ignoreDifferences[3]: hides nothing now: Argo CD would see no difference at any path it covers in the 1 resource it applies to",
		"Application argocd/shop spec.ignoreDifferences[4]: hides nothing now: it applies to no resource of the 2 applications read",
		"argocd-cm data.resource.customizations.ignoreDifferences.admissionregistration.k8s.io_MutatingWebhookConfiguration: hides nothing now: it applies to no resource of the 2 applications read",
	}
	if strings.Join(stale, "\n") != strings.Join(want, "\n") {
		t.Errorf("stale rules:\n%s\nwant:\n%s", strings.Join(stale, "\n"), strings.Join(want, "\n"))
	}
	if rep.Stale != len(want) {
		t.Errorf("report counts %d stale rules, want %d", rep.Stale, len(want))
	}
	// Without the platform application, its ClusterRole is gone: the
	// aggregated-roles option then hides nothing.
	alone := byName(t, inventory(t, "shop.yaml"))
	if r := alone["argocd-cm resource.compareoptions ignoreAggregatedRoles: true"]; r == nil || !r.Stale {
		t.Errorf("ignoreAggregatedRoles with no aggregated ClusterRole is not stale: %+v", r)
	}
}

// TestIgnoreInventorySensitive flags the rules that cover a sensitive path:
// a jq rule over an image, a Secret's data, RBAC rules of an aggregated role,
// and a rule for a kind with no resource now whose pointer names an image.
func TestIgnoreInventorySensitive(t *testing.T) {
	rep := inventory(t, "shop.yaml", "platform.yaml")
	var got []string
	for i := range rep.Rules {
		for _, s := range rep.Rules[i].Sensitive {
			where := "every " + rep.Rules[i].Scope.Kind
			if s.Resource != nil {
				where = s.Resource.String()
			}
			got = append(got, rep.Rules[i].Name()+" | "+where+" "+s.Path)
		}
	}
	want := []string{
		"Application argocd/shop spec.ignoreDifferences[1] | Deployment shop/web /spec/template/spec/containers/0/image",
		"Application argocd/shop spec.ignoreDifferences[4] | every CronJob /spec/jobTemplate/spec/template/spec/containers/0/image",
		"Application argocd/shop spec.ignoreDifferences[5] | Secret shop/web-token /data/token",
		"argocd-cm resource.compareoptions ignoreAggregatedRoles: true | ClusterRole monitoring-view /rules",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sensitive:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rep.Sensitive != len(want) {
		t.Errorf("report counts %d sensitive rules, want %d", rep.Sensitive, len(want))
	}
	// A policy's sensitivePaths add to the table.
	extra, err := drift.ParseSensitivePath("Service:/spec/clusterIP")
	if err != nil {
		t.Fatal(err)
	}
	withPolicy, err := Inventory(load(t, "shop.yaml"), Options{Sensitivity: drift.Sensitivity{Extra: []drift.SensitivePath{extra}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := byName(t, withPolicy)["Application argocd/shop spec.ignoreDifferences[3]"]; r == nil || len(r.Sensitive) != 1 {
		t.Errorf("a policy sensitive path covered by a rule is not flagged: %+v", r)
	}
}

// TestIgnoreInventorySecretValuesNeverShown: the Secret's data, encoded or
// decoded, appears in neither report, though the rule hides a difference there.
func TestIgnoreInventorySecretValuesNeverShown(t *testing.T) {
	rep := inventory(t, "shop.yaml", "platform.yaml")
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, "shop.yaml")[0]
	var values []string
	for _, res := range s.Resources {
		if res.Ref().Kind != "Secret" {
			continue
		}
		for _, o := range []drift.Object{res.Target, res.Live} {
			for _, v := range drift.Map(o, "data") {
				enc := v.(string)
				dec, _ := base64.StdEncoding.DecodeString(enc)
				values = append(values, enc, string(dec))
			}
		}
	}
	if len(values) != 4 {
		t.Fatalf("the test snapshot has %d Secret values, want 4", len(values))
	}
	for _, out := range []string{string(Text(rep)), string(js)} {
		for _, v := range values {
			if strings.Contains(out, v) {
				t.Errorf("a report shows the Secret value %q", v)
			}
		}
	}
	r := byName(t, rep)["Application argocd/shop spec.ignoreDifferences[5]"]
	if r == nil || r.Hides != 1 || !r.Resources[0].Paths[0].Masked {
		t.Errorf("the Secret rule does not report its one hidden, masked difference: %+v", r)
	}
}

// TestIgnoreInventoryDeclared: a rule is located at its line in the
// app-of-apps manifest and in argocd-cm's manifest, and a rule whose Git
// value is not the cluster's is not placed there.
func TestIgnoreInventoryDeclared(t *testing.T) {
	snaps := load(t, "shop.yaml", "platform.yaml")
	file := snaps[1].Repo.Files["apps/shop.yaml"]
	lines := strings.Split(file, "\n")
	// the lines that start each list item under ignoreDifferences
	var items []int
	for i, l := range lines {
		if strings.HasPrefix(l, "    - ") {
			items = append(items, i+1)
		}
	}
	if len(items) != 6 {
		t.Fatalf("apps/shop.yaml has %d rule items, want 6", len(items))
	}
	rep, err := Inventory(snaps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rules := byName(t, rep)
	for i, line := range items {
		r := rules[fmt.Sprintf("Application argocd/shop spec.ignoreDifferences[%d]", i)]
		if r == nil || r.Declared.File != "apps/shop.yaml" || r.Declared.Line != line || r.Declared.Repo != "https://git.example.com/platform.git" {
			t.Errorf("rule %d declared at %+v, want apps/shop.yaml:%d", i, r.Declared, line)
		}
	}
	cm := rules["argocd-cm data.resource.customizations.ignoreDifferences.all"]
	cmLines := strings.Split(snaps[1].Repo.Files["argocd/argocd-cm.yaml"], "\n")
	if cm.Declared.File != "argocd/argocd-cm.yaml" || !strings.Contains(cmLines[cm.Declared.Line-1], "resource.customizations.ignoreDifferences.all:") {
		t.Errorf("the .all rule is declared at %+v", cm.Declared)
	}
	// The cluster's Application has another first rule than Git's.
	spec := drift.Map(snaps[0].Application, "spec")
	first := drift.List(spec, "ignoreDifferences")[0].(map[string]any)
	first["jsonPointers"] = []any{"/spec/minReadySeconds"}
	rep, err = Inventory(snaps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := byName(t, rep)["Application argocd/shop spec.ignoreDifferences[0]"].Declared
	if d.File != "" || !strings.Contains(d.NotInGit, "apps/shop.yaml in the repository files has another value") {
		t.Errorf("a rule Git declares otherwise is placed at %+v", d)
	}
	// Without the platform repository nothing is placed.
	rep, err = Inventory(snaps[:1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rules {
		if r.Declared.File != "" || r.Declared.NotInGit == "" {
			t.Errorf("%s placed at %+v without the repository", r.Name(), r.Declared)
		}
	}
}

// TestIgnoreInventoryOrigin: the commit the history names dates the rule,
// and a history that cannot tell says why, never a guess.
func TestIgnoreInventoryOrigin(t *testing.T) {
	added := time.Date(2026, 9, 4, 10, 0, 0, 0, time.UTC)
	var asked []string
	origin := func(repo, file string, line int, content string) Origin {
		asked = append(asked, fmt.Sprintf("%s %s:%d", repo, file, line))
		if !strings.Contains(content, "kind: Application") && !strings.Contains(content, "kind: ConfigMap") {
			t.Errorf("origin asked about %s without its content", file)
		}
		if file == "apps/shop.yaml" {
			return Origin{Commit: "0123456789abcdef0123456789abcdef01234567", When: added}
		}
		return Origin{Unknown: "commit unknown: only a depth-1 checkout"}
	}
	rep, err := Inventory(load(t, "shop.yaml", "platform.yaml"), Options{Now: now, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != len(rep.Rules) {
		t.Errorf("origin asked %d times for %d rules in Git", len(asked), len(rep.Rules))
	}
	rules := byName(t, rep)
	d := rules["Application argocd/shop spec.ignoreDifferences[0]"].Declared
	if d.Commit == "" || d.AgeDays == nil || *d.AgeDays != 90 || !d.Added.Equal(added) {
		t.Errorf("a dated rule reads %+v, want 90 days old", d)
	}
	d = rules["argocd-cm data.resource.customizations.ignoreDifferences.all"].Declared
	if d.Commit != "" || d.AgeDays != nil || d.CommitUnknown != "commit unknown: only a depth-1 checkout" {
		t.Errorf("an undated rule reads %+v", d)
	}
	if !strings.Contains(string(Text(rep)), "added in commit 0123456789ab on 2026-09-04 (90 days ago)") {
		t.Errorf("the text report does not date the rule:\n%s", Text(rep))
	}
}

// TestIgnoreInventoryOnceAcrossSnapshots: argocd-cm in every snapshot is one
// set of rules, and an Application's rule is one rule, whatever the order.
func TestIgnoreInventoryOnceAcrossSnapshots(t *testing.T) {
	a := inventory(t, "shop.yaml", "platform.yaml")
	b := inventory(t, "platform.yaml", "shop.yaml")
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("the report depends on the order of the snapshots")
	}
	twice := inventory(t, "shop.yaml", "shop.yaml")
	once := inventory(t, "shop.yaml")
	if len(twice.Rules) != len(once.Rules) || len(twice.Applications) != 1 {
		t.Errorf("the same snapshot twice gives %d rules in %d applications, once %d", len(twice.Rules), len(twice.Applications), len(once.Rules))
	}
}

// TestIgnoreResourceUpdatesJudged checks that an ignoreResourceUpdates rule
// is judged by what it does: it covers only the paths it names (Argo CD's
// stock `.all: /status` rule is not credited with spec.replicas or an image),
// it hides and flags nothing, Argo CD's shipped rules are recognised (in any
// order) and never stale, a shipped rule someone changed is theirs, and a
// rule of their own naming a path no resource has is stale.
func TestIgnoreResourceUpdatesJudged(t *testing.T) {
	rep := inventory(t, "stock.yaml")
	rules := byName(t, rep)
	tests := []struct {
		rule     string
		paths    []string
		stale    bool
		default_ bool
	}{
		// status is never compared here, so it names nothing shown: stale, were it not Argo CD's
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.all", default_: true},
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.ConfigMap",
			paths: []string{"argocd/web ConfigMap web/status /metadata/annotations/cluster-autoscaler.kubernetes.io~1last-updated false"}, default_: true},
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.argoproj.io_Application", default_: true},
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.argoproj.io_Rollout", default_: true},
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.autoscaling_HorizontalPodAutoscaler", default_: true},
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.discovery.k8s.io_EndpointSlice", default_: true},
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.Endpoints", default_: true},
		// one path fewer than Argo CD ships: the platform team's rule now
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.apps_ReplicaSet", stale: true},
		{rule: "argocd-cm data.resource.customizations.ignoreResourceUpdates.apps_Deployment", stale: true},
	}
	if len(rules) != len(tests) {
		t.Errorf("%d rules, want %d", len(rules), len(tests))
	}
	for _, tt := range tests {
		r, ok := rules[tt.rule]
		if !ok {
			t.Errorf("rule %s missing", tt.rule)
			continue
		}
		if got := paths(r); strings.Join(got, "\n") != strings.Join(tt.paths, "\n") {
			t.Errorf("%s covers:\n%s\nwant:\n%s", tt.rule, strings.Join(got, "\n"), strings.Join(tt.paths, "\n"))
		}
		if r.Stale != tt.stale {
			t.Errorf("%s: stale %v (%s), want %v", tt.rule, r.Stale, r.StaleWhy, tt.stale)
		}
		if (r.ArgoCDDefault != "") != tt.default_ {
			t.Errorf("%s: Argo CD default %q, want %v", tt.rule, r.ArgoCDDefault, tt.default_)
		}
		if r.Hides != 0 || len(r.Sensitive) != 0 {
			t.Errorf("%s hides %d and covers sensitive %v; an ignoreResourceUpdates rule hides nothing", tt.rule, r.Hides, r.Sensitive)
		}
	}
	if rep.Stale != 2 {
		t.Errorf("report counts %d stale rules, want 2", rep.Stale)
	}
}

// TestArgoCDDefaultsTable checks the table of Argo CD's shipped rules is
// read strictly: a key that is no ignore key, an entry without paths or
// source, and a key listed twice are refused.
func TestArgoCDDefaultsTable(t *testing.T) {
	if len(ArgoCDDefaults()) == 0 {
		t.Fatal("no Argo CD default rules loaded")
	}
	tests := []struct{ name, yaml, want string }{
		{"not an ignore key", "- {key: resource.exclusions, jsonPointers: [/a], source: https://x}", "not a resource.customizations ignore key"},
		{"no path", "- {key: resource.customizations.ignoreResourceUpdates.all, source: https://x}", "names no path"},
		{"no source", "- {key: resource.customizations.ignoreResourceUpdates.all, jsonPointers: [/status]}", "no source URL"},
		{"twice", "- {key: resource.customizations.ignoreResourceUpdates.all, jsonPointers: [/status], source: https://x}\n- {key: resource.customizations.ignoreResourceUpdates.all, jsonPointers: [/a], source: https://x}", "listed twice"},
		{"unknown field", "- {key: resource.customizations.ignoreResourceUpdates.all, jsonPointers: [/status], source: https://x, since: v2}", "since"},
	}
	for _, tt := range tests {
		_, err := readDefaults([]byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}
