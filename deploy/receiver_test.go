package deploy_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
)

// container is the Deployment's driftfix container.
func container(t *testing.T, objs []drift.Object) map[string]any {
	t.Helper()
	dep := byKey(objs)["Deployment driftfix/driftfix"]
	cs := drift.List(dep, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers", len(cs))
	}
	c, _ := cs[0].(map[string]any)
	return c
}

func args(t *testing.T, objs []drift.Object) []string {
	t.Helper()
	var out []string
	for _, a := range drift.List(container(t, objs), "args") {
		out = append(out, fmt.Sprint(a))
	}
	return out
}

// notifyArg is the value of --argocd-notify-secret-file, "" without it.
func notifyArg(t *testing.T, objs []drift.Object) string {
	t.Helper()
	for _, a := range args(t, objs) {
		if v, ok := strings.CutPrefix(a, "--argocd-notify-secret-file="); ok {
			return v
		}
	}
	return ""
}

func notifications(v map[string]any) map[string]any {
	return map[string]any{"argocd": map[string]any{"notifications": v}}
}

// TestChartArgoCDNotifications: argocd.notifications.enabled serves Argo CD
// Notifications' POST /argocd on the receiver's port (container, Service,
// NetworkPolicy; no Ingress: the controller posts from inside the
// cluster), the shared secret read from a mounted file: a key of the
// chart's existingSecret, of another Secret, or secretValue in a Secret the
// chart makes. The value is in that Secret only, never in the ConfigMap or
// the pod's flags. The shipped Argo CD patch posts to the Service the
// chart names and sends the key the chart reads by default.
func TestChartArgoCDNotifications(t *testing.T) {
	render := func(vals map[string]any) []drift.Object {
		t.Helper()
		objs, err := renderChart(t, vals)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	off := render(nil)
	if a := notifyArg(t, off); a != "" || strings.Contains(fmt.Sprint(args(t, off)), "--webhook-listen") {
		t.Errorf("notifications off, yet the pod is started with %q", args(t, off))
	}

	on := render(notifications(map[string]any{"enabled": true}))
	if a := notifyArg(t, on); a != "/var/run/secrets/driftfix/driftfix-notify-secret" {
		t.Errorf("the secret from existingSecret: --argocd-notify-secret-file=%q", a)
	}
	a := strings.Join(args(t, on), " ")
	if !strings.Contains(a, "--webhook-listen=:8081") || strings.Contains(a, "--webhook-secret-file") {
		t.Errorf("notifications alone: the receiver listens on 8081 and GitHub's deliveries stay off: %s", a)
	}
	if p := fmt.Sprint(drift.Lookup(container(t, on), "ports")); !strings.Contains(p, "containerPort:8081") || !strings.Contains(p, "name:webhook") {
		t.Errorf("the container does not name the receiver's port: %s", p)
	}
	k := byKey(on)
	svcPorts := drift.List(k["Service driftfix/driftfix"], "spec", "ports")
	if !strings.Contains(fmt.Sprint(svcPorts), "port:8081") {
		t.Errorf("the Service does not name the receiver's port: %v", svcPorts)
	}
	if np := fmt.Sprint(drift.Lookup(k["NetworkPolicy driftfix/driftfix"], "spec", "ingress")); !strings.Contains(np, "port:8081") {
		t.Errorf("the NetworkPolicy does not let the notifications in: %s", np)
	}
	if k["Ingress driftfix/driftfix-webhook"] != nil {
		t.Error("notifications alone render an Ingress: the controller posts from inside the cluster")
	}
	for _, o := range on {
		if drift.Str(o, "kind") == "Secret" {
			t.Errorf("no secretValue, yet the chart makes Secret %s", drift.Str(o, "metadata", "name"))
		}
	}

	// The shipped patch posts to this Service, on this port, with this key.
	data := configMapData(t, "argocd/argocd-notifications-webhook-patch.yaml")
	var svc struct {
		URL     string `json:"url"`
		Headers []struct{ Name, Value string }
	}
	if err := yaml.Unmarshal([]byte(data["service.webhook.driftfix"]), &svc); err != nil {
		t.Fatal(err)
	}
	if want := "http://driftfix.driftfix.svc:8081/argocd"; svc.URL != want {
		t.Errorf("the shipped patch posts to %s; the chart's Service (release driftfix, namespace driftfix) is %s", svc.URL, want)
	}
	if !slices.ContainsFunc(svc.Headers, func(h struct{ Name, Value string }) bool { return h.Value == "$driftfix-notify-secret" }) {
		t.Errorf("the shipped patch's headers %+v do not send argocd-notifications-secret's key driftfix-notify-secret, the chart's default secretKey", svc.Headers)
	}

	// secretValue: a Secret of the chart's, mounted alone.
	const value = "n0tify-s3cret-value"
	own := render(notifications(map[string]any{"enabled": true, "secretValue": value}))
	if a := notifyArg(t, own); a != "/var/run/secrets/driftfix-argocd-notify/driftfix-notify-secret" {
		t.Errorf("secretValue: --argocd-notify-secret-file=%q", a)
	}
	sec := byKey(own)["Secret driftfix/driftfix-argocd-notify"]
	if got := drift.Str(sec, "data", "driftfix-notify-secret"); got != base64.StdEncoding.EncodeToString([]byte(value)) {
		t.Errorf("the chart's Secret holds %q under driftfix-notify-secret, want the value base64-encoded", got)
	}
	checkMounted(t, own, "driftfix-argocd-notify", "driftfix-notify-secret")
	for _, o := range own {
		b, _ := json.Marshal(o)
		if drift.Str(o, "kind") != "Secret" && (strings.Contains(string(b), value) || strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte(value)))) {
			t.Errorf("the shared secret is in %s %s, not only in the Secret", drift.Str(o, "kind"), drift.Str(o, "metadata", "name"))
		}
	}

	// Another existing Secret, another key.
	other := render(notifications(map[string]any{"enabled": true, "existingSecret": "argocd-shared", "secretKey": "notify.token"}))
	if a := notifyArg(t, other); a != "/var/run/secrets/driftfix-argocd-notify/notify.token" {
		t.Errorf("existingSecret: --argocd-notify-secret-file=%q", a)
	}
	checkMounted(t, other, "argocd-shared", "notify.token")
	// The chart's existingSecret named again: already mounted, no second volume.
	same := render(map[string]any{"existingSecret": "driftfix-all", "argocd": map[string]any{"notifications": map[string]any{"enabled": true, "existingSecret": "driftfix-all"}}})
	if a := notifyArg(t, same); a != "/var/run/secrets/driftfix/driftfix-notify-secret" {
		t.Errorf("existingSecret equal to the chart's: --argocd-notify-secret-file=%q", a)
	}
	if v := fmt.Sprint(drift.Lookup(byKey(same)["Deployment driftfix/driftfix"], "spec", "template", "spec", "volumes")); strings.Contains(v, "argocd-notify") {
		t.Errorf("the chart's Secret is mounted twice: %s", v)
	}

	// With GitHub's deliveries too: one port, both secrets.
	both := render(map[string]any{"webhook": map[string]any{"enabled": true}, "argocd": map[string]any{"notifications": map[string]any{"enabled": true}}})
	a = strings.Join(args(t, both), " ")
	if strings.Count(a, "--webhook-listen=") != 1 || !strings.Contains(a, "--webhook-secret-file=") || !strings.Contains(a, "--argocd-notify-secret-file=") {
		t.Errorf("webhook and notifications: %s", a)
	}
	if n := strings.Count(fmt.Sprint(drift.List(byKey(both)["Service driftfix/driftfix"], "spec", "ports")), "port:8081"); n != 1 {
		t.Errorf("webhook and notifications: the Service names the port %d times", n)
	}

	for _, tc := range []struct {
		vals map[string]any
		want string
	}{
		{notifications(map[string]any{"enabled": true, "secretValue": "x", "existingSecret": "y"}), "existingSecret or secretValue, not both"},
		{map[string]any{"mode": "cronjob", "argocd": map[string]any{"notifications": map[string]any{"enabled": true}}}, "needs mode: deployment"},
		{map[string]any{"mode": "cronjob", "networkPolicy": map[string]any{"enabled": false}, "argocd": map[string]any{"notifications": map[string]any{"enabled": true}}}, "needs mode: deployment"},
	} {
		if _, err := renderChart(t, tc.vals); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.vals, err, tc.want)
		}
	}
	for _, bad := range []map[string]any{
		notifications(map[string]any{"enabled": true, "secretKey": "../etc/passwd"}),
		notifications(map[string]any{"enabled": true, "secretKey": ""}),
		notifications(map[string]any{"enabled": "yes"}),
		notifications(map[string]any{"secret": "x"}),
	} {
		if _, _, err := helmTemplate(t, bad, nil); err == nil {
			t.Errorf("the schema takes %v", bad)
		}
	}
}

// checkMounted checks the Deployment mounts key of Secret name read-only at
// /var/run/secrets/driftfix-argocd-notify, and only that key.
func checkMounted(t *testing.T, objs []drift.Object, name, key string) {
	t.Helper()
	pod := drift.Map(byKey(objs)["Deployment driftfix/driftfix"], "spec", "template", "spec")
	var vol map[string]any
	for _, v := range drift.List(pod, "volumes") {
		if drift.Str(v, "name") == "argocd-notify" {
			vol, _ = v.(map[string]any)
		}
	}
	want := map[string]any{"name": "argocd-notify", "secret": map[string]any{"secretName": name, "items": []any{map[string]any{"key": key, "path": key}}}}
	if !reflect.DeepEqual(vol, want) {
		t.Errorf("the volume argocd-notify is %v, want %v", vol, want)
	}
	mounted := false
	for _, m := range drift.List(container(t, objs), "volumeMounts") {
		mounted = mounted || drift.Str(m, "name") == "argocd-notify" && drift.Str(m, "mountPath") == "/var/run/secrets/driftfix-argocd-notify" && drift.Lookup(m, "readOnly") == true
	}
	if !mounted {
		t.Errorf("the container does not mount argocd-notify read-only: %v", drift.List(container(t, objs), "volumeMounts"))
	}
}

// TestKustomizeReceiverComponents: the Kustomize base's components open the
// receiver as the chart does: an overlay of the base with the receiver
// component and github-webhook, argocd-notifications or both renders the
// same Deployment, Service and NetworkPolicy as the chart with
// webhook.enabled, argocd.notifications.enabled or both.
func TestKustomizeReceiverComponents(t *testing.T) {
	base := files(t, "kustomize")
	for name, tc := range map[string]struct {
		components []string
		values     map[string]any
	}{
		"github":        {[]string{"receiver", "github-webhook"}, map[string]any{"webhook": map[string]any{"enabled": true}}},
		"notifications": {[]string{"receiver", "argocd-notifications"}, notifications(map[string]any{"enabled": true})},
		"both":          {[]string{"receiver", "github-webhook", "argocd-notifications"}, map[string]any{"webhook": map[string]any{"enabled": true}, "argocd": map[string]any{"notifications": map[string]any{"enabled": true}}}},
	} {
		t.Run(name, func(t *testing.T) {
			fs := map[string][]byte{}
			for p, b := range base {
				fs[p] = b
			}
			overlay := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../kustomize]\ncomponents:\n"
			for _, c := range tc.components {
				overlay += "  - ../kustomize/components/" + c + "\n"
			}
			fs["overlay/kustomization.yaml"] = []byte(overlay)
			kust, err := render.Kustomize(fs, "overlay")
			if err != nil {
				t.Fatal(err)
			}
			chart, err := renderChart(t, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			c, k := withoutHelm(t, chart), byKey(kust)
			for _, key := range []string{"Deployment driftfix/driftfix", "Service driftfix/driftfix", "NetworkPolicy driftfix/driftfix"} {
				if !reflect.DeepEqual(c[key], k[key]) {
					a, _ := json.MarshalIndent(c[key], "", "  ")
					b, _ := json.MarshalIndent(k[key], "", "  ")
					t.Errorf("%s differs between the chart and the Kustomize components:\nchart:\n%s\nkustomize:\n%s", key, a, b)
				}
			}
			if !strings.Contains(fmt.Sprint(drift.List(k["Service driftfix/driftfix"], "spec", "ports")), "port:8081") {
				t.Errorf("the overlay's Service has no receiver port")
			}
		})
	}
}
