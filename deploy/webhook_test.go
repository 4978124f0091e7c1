package deploy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestChartWebhook: with webhook.enabled the pod serves GitHub's deliveries
// on its own port with the secret from existingSecret, the Service and the
// NetworkPolicy open that port, and the optional Ingress exposes only the
// webhook path; off (the default) none of it is rendered. The pods carry a
// checksum of the policy, which changes with it.
func TestChartWebhook(t *testing.T) {
	find := func(objs []drift.Object, kind string) drift.Object {
		for _, o := range objs {
			if drift.Str(o, "kind") == kind {
				return o
			}
		}
		return nil
	}
	dump := func(v any) string { return fmt.Sprint(v) }
	off, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	on, err := renderChart(t, map[string]any{"webhook": map[string]any{"enabled": true,
		"ingress": map[string]any{"enabled": true, "host": "driftfix.example.com", "className": "nginx", "tlsSecret": "driftfix-tls"}}})
	if err != nil {
		t.Fatal(err)
	}
	args := func(objs []drift.Object) string {
		return dump(drift.Lookup(find(objs, "Deployment"), "spec", "template", "spec", "containers"))
	}
	if a := args(off); strings.Contains(a, "--webhook") {
		t.Errorf("webhook off, yet the pod is started with %s", a)
	}
	if find(off, "Ingress") != nil || strings.Contains(dump(find(off, "Service")), "webhook") {
		t.Error("webhook off, yet an Ingress or a Service port is rendered")
	}
	a := args(on)
	for _, want := range []string{"--webhook-secret-file=/var/run/secrets/driftfix/github-webhook-secret", "--webhook-listen=:8081", "--webhook-max-body=5242880", "--push-delay=1m", "containerPort:8081", "name:webhook"} {
		if !strings.Contains(a, want) {
			t.Errorf("webhook on: the container lacks %s: %s", want, a)
		}
	}
	if s := dump(drift.Lookup(find(on, "Service"), "spec", "ports")); !strings.Contains(s, "port:8081") {
		t.Errorf("the Service does not name the webhook port: %s", s)
	}
	if np := dump(drift.Lookup(find(on, "NetworkPolicy"), "spec", "ingress")); !strings.Contains(np, "port:8081") {
		t.Errorf("the NetworkPolicy does not let deliveries in: %s", np)
	}
	ing := find(on, "Ingress")
	if ing == nil {
		t.Fatal("no Ingress with webhook.ingress.enabled")
	}
	rules := dump(drift.Lookup(ing, "spec"))
	for _, want := range []string{"host:driftfix.example.com", "path:/webhook", "pathType:Exact", "name:webhook", "ingressClassName:nginx", "secretName:driftfix-tls"} {
		if !strings.Contains(rules, want) {
			t.Errorf("the Ingress lacks %s: %s", want, rules)
		}
	}
	if strings.Contains(a, "--slack-signing-secret-file") || strings.Contains(rules, "/slack/actions") {
		t.Errorf("no Slack signing secret, yet the buttons are served: %s %s", a, rules)
	}
	buttons, err := renderChart(t, map[string]any{"webhook": map[string]any{"enabled": true, "slackSigningSecretKey": "slack-signing-secret",
		"ingress": map[string]any{"enabled": true, "host": "driftfix.example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	if a := args(buttons); !strings.Contains(a, "--slack-signing-secret-file=/var/run/secrets/driftfix/slack-signing-secret") {
		t.Errorf("slackSigningSecretKey set: the container lacks --slack-signing-secret-file: %s", a)
	}
	if r := dump(drift.Lookup(find(buttons, "Ingress"), "spec")); !strings.Contains(r, "path:/slack/actions") || !strings.Contains(r, "path:/webhook") {
		t.Errorf("slackSigningSecretKey set: the Ingress does not route both paths: %s", r)
	}
	if _, err := renderChart(t, map[string]any{"webhook": map[string]any{"enabled": true, "ingress": map[string]any{"enabled": true}}}); err == nil || !strings.Contains(err.Error(), "webhook.ingress.host") {
		t.Errorf("an Ingress without a host: %v", err)
	}

	sum := func(vals map[string]any) string {
		objs, err := renderChart(t, vals)
		if err != nil {
			t.Fatal(err)
		}
		return drift.Str(find(objs, "Deployment"), "spec", "template", "metadata", "annotations", "checksum/config")
	}
	live, dry := sum(nil), sum(map[string]any{"dryRun": true})
	if len(live) != 64 || live == dry {
		t.Errorf("checksum/config %q, with dryRun %q: want a sum that changes with the policy", live, dry)
	}
	if again := sum(nil); again != live {
		t.Errorf("checksum/config changed between two renders of the same values: %s, %s", live, again)
	}
}
