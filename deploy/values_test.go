package deploy_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
)

// TestChartConfigValue: the config value can say what the chart's own values
// cannot (a second Argo CD with a shard, a private GitLab's credentials,
// limits, platform repositories as mappings), merged over the chart's
// policy into a file driftfix accepts, the chart's secrets still files.
func TestChartConfigValue(t *testing.T) {
	vals := map[string]any{
		"platformRepos": []any{map[string]any{"url": "https://github.com/example-org/platform.git", "instance": "main", "file": "argocd/argocd-cm.yaml"}},
		"config": map[string]any{
			"argocd": []any{
				map[string]any{"name": "main", "server": "https://argocd-server.argocd.svc.cluster.local", "tokenFile": "/var/run/secrets/driftfix/argocd-token", "shard": "[a-m]*"},
				map[string]any{"name": "edge", "server": "https://argocd.edge.example.com", "tokenFile": "/var/run/secrets/driftfix/edge-token"},
			},
			"repoCredentials": []any{map[string]any{"urlPrefix": "https://gitlab.example.com/", "username": "oauth2", "tokenFile": "/var/run/secrets/driftfix/gitlab-token"}},
			"limits":          map[string]any{"renderedBytes": "64Mi", "renderTimeout": "20s"},
			"policy":          map[string]any{"stuckAfter": "30m"},
		},
	}
	objs, err := renderChart(t, vals)
	if err != nil {
		t.Fatal(err)
	}
	text := drift.Str(byKey(objs)["ConfigMap driftfix/driftfix"], "data", "driftfix.yaml")
	cfg, err := config.Parse([]byte(text))
	if err != nil {
		t.Fatalf("the merged policy is refused:\n%s\n%v", text, err)
	}
	if len(cfg.ArgoCD) != 2 || cfg.ArgoCD[0].Shard != "[a-m]*" || cfg.ArgoCD[1].Name != "edge" {
		t.Errorf("Argo CD instances %+v, want main (sharded) and edge", cfg.ArgoCD)
	}
	if len(cfg.RepoCredentials) != 1 || cfg.RepoCredentials[0].TokenFile != "/var/run/secrets/driftfix/gitlab-token" {
		t.Errorf("repoCredentials %+v", cfg.RepoCredentials)
	}
	if cfg.Limits.RenderedBytes != 64<<20 || cfg.Limits.RenderTimeout != 20*time.Second {
		t.Errorf("limits %+v", cfg.Limits)
	}
	// merged, not replaced: the chart's own policy keys stay
	if cfg.Policy.StuckAfter != 30*time.Minute || !slices.Contains(cfg.Policy.Labels, "driftfix") {
		t.Errorf("policy stuckAfter %s labels %v: config must merge over the chart's policy", cfg.Policy.StuckAfter, cfg.Policy.Labels)
	}
	if len(cfg.PlatformRepos) != 1 || cfg.PlatformRepos[0].File != "argocd/argocd-cm.yaml" {
		t.Errorf("platformRepos %+v", cfg.PlatformRepos)
	}
}

// TestChartPodValues: proxies, extra volumes, pull secrets, pod annotations,
// the ServiceMonitor's selector labels and a PodDisruptionBudget reach the
// objects, in both modes where they apply.
func TestChartPodValues(t *testing.T) {
	for _, mode := range []string{"deployment", "cronjob"} {
		vals := map[string]any{
			"mode":                mode,
			"extraEnv":            []any{map[string]any{"name": "HTTPS_PROXY", "value": "http://proxy.example.com:3128"}},
			"extraVolumes":        []any{map[string]any{"name": "ca", "configMap": map[string]any{"name": "corp-ca"}}},
			"extraVolumeMounts":   []any{map[string]any{"name": "ca", "mountPath": "/etc/ssl/corp", "readOnly": true}},
			"imagePullSecrets":    []any{map[string]any{"name": "registry-credentials"}},
			"podAnnotations":      map[string]any{"example.com/team": "platform"},
			"serviceMonitor":      map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
			"podDisruptionBudget": map[string]any{"enabled": true},
		}
		objs, err := renderChart(t, vals)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		o := byKey(objs)
		pod := drift.Map(o["Deployment driftfix/driftfix"], "spec", "template")
		if mode == "cronjob" {
			pod = drift.Map(o["CronJob driftfix/driftfix"], "spec", "jobTemplate", "spec", "template")
		}
		spec := drift.Map(pod, "spec")
		ctr := drift.List(spec, "containers")[0]
		var env, mounts, vols, secrets []string
		for _, e := range drift.List(ctr, "env") {
			env = append(env, drift.Str(e, "name"))
		}
		for _, m := range drift.List(ctr, "volumeMounts") {
			mounts = append(mounts, drift.Str(m, "mountPath"))
		}
		for _, v := range drift.List(spec, "volumes") {
			vols = append(vols, drift.Str(v, "name"))
		}
		for _, s := range drift.List(spec, "imagePullSecrets") {
			secrets = append(secrets, drift.Str(s, "name"))
		}
		for what, ok := range map[string]bool{
			"HTTPS_PROXY in env":           slices.Contains(env, "HTTPS_PROXY"),
			"the ca mount":                 slices.Contains(mounts, "/etc/ssl/corp") && slices.Contains(mounts, "/var/lib/driftfix"),
			"the ca volume":                slices.Contains(vols, "ca") && slices.Contains(vols, "config"),
			"the pull secret":              slices.Equal(secrets, []string{"registry-credentials"}),
			"the pod annotation":           drift.Str(pod, "metadata", "annotations", "example.com/team") == "platform",
			"the pod's labels still there": drift.Str(pod, "metadata", "labels", "app.kubernetes.io/name") == "driftfix",
		} {
			if !ok {
				t.Errorf("%s: %s missing from the pod:\n%v", mode, what, pod)
			}
		}
		sm, pdb := o["ServiceMonitor driftfix/driftfix"], o["PodDisruptionBudget driftfix/driftfix"]
		if mode == "deployment" {
			if drift.Str(sm, "metadata", "labels", "release") != "kube-prometheus-stack" || drift.Str(sm, "metadata", "labels", "app.kubernetes.io/name") != "driftfix" {
				t.Errorf("ServiceMonitor labels %v", drift.Map(sm, "metadata", "labels"))
			}
			if drift.Lookup(pdb, "spec", "maxUnavailable") == nil || drift.Str(pdb, "spec", "selector", "matchLabels", "app.kubernetes.io/instance") != "driftfix" {
				t.Errorf("PodDisruptionBudget %v", pdb)
			}
		} else if pdb != nil {
			t.Errorf("a PodDisruptionBudget for a CronJob: %v", pdb)
		}
	}
}

// TestChartSchemaNewValues: the values schema refuses what the chart would
// render wrong.
func TestChartSchemaNewValues(t *testing.T) {
	for _, vals := range []map[string]any{
		{"imagePullSecrets": []any{"registry-credentials"}},        // a name, not {name: ...}
		{"extraVolumeMounts": []any{map[string]any{"name": "ca"}}}, // no mountPath
		{"config": "limits: {renderedBytes: 64Mi}"},                // a string, not a mapping
		{"serviceMonitor": map[string]any{"labels": map[string]any{"release": 1}}},
	} {
		if _, err := renderChart(t, vals); err == nil || !strings.Contains(err.Error(), "schema") {
			t.Errorf("values %v: error %v, want the schema to refuse them", vals, err)
		}
	}
}
