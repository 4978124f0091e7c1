package deploy_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
)

var update = flag.Bool("update", false, "rewrite driftfix.schema.json from the policy's key table")

// policySchema compiles deploy/driftfix.schema.json.
func policySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile("driftfix.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("driftfix.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("driftfix.schema.json")
	if err != nil {
		t.Fatalf("driftfix.schema.json is no valid JSON Schema: %v", err)
	}
	return s
}

// asJSON reads a YAML policy as JSON values, as an editor's YAML language
// server hands it to the schema.
func asJSON(t *testing.T, text string) any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPolicyJSONSchema: the JSON Schema published for editors
// (deploy/driftfix.schema.json) is generated from the policy's key table,
// so it cannot drift from what the parser reads (-update rewrites it);
// every policy the project ships (the example, the chart's renders) is
// valid under it; and a misspelt key, at the top or nested, is refused by
// the schema as by the parser.
func TestPolicyJSONSchema(t *testing.T) {
	gen := config.JSONSchema()
	if *update {
		if err := os.WriteFile("driftfix.schema.json", gen, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile("driftfix.schema.json")
	if err != nil || !bytes.Equal(have, gen) {
		t.Fatalf("deploy/driftfix.schema.json is not what the policy's keys give (go test ./deploy -run TestPolicyJSONSchema -update)")
	}
	sch := policySchema(t)
	example, err := os.ReadFile("driftfix.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{"example": string(example)}
	for name, vals := range map[string]map[string]any{"chart default": nil, "chart full": fullValues} {
		objs, err := renderChart(t, vals)
		if err != nil {
			t.Fatal(err)
		}
		good[name] = drift.Str(byKey(objs)["ConfigMap driftfix/driftfix"], "data", "driftfix.yaml")
	}
	for name, text := range good {
		if _, err := config.Parse([]byte(text)); err != nil {
			t.Fatalf("%s: the parser refuses it: %v", name, err)
		}
		if err := sch.Validate(asJSON(t, text)); err != nil {
			t.Errorf("%s: valid for driftfix, refused by the schema: %v", name, err)
		}
	}
	const base = "argocd: [{server: https://argocd.example.com, tokenFile: /t}]\n"
	for _, bad := range []string{
		base + "polcy: {stuckAfter: 10m}\n",
		base + "policy: {stuckAftr: 10m}\n",
		base + "policy: {draft: maybe}\n",
		base + "policy: {manualChanges: ignore}\n",
		"argocd: [{tokenFile: /t}]\n",                // no server
		base + "platformRepos: [{instance: main}]\n", // no url
	} {
		if _, err := config.Parse([]byte(bad)); err == nil {
			t.Errorf("the parser accepts %q", bad)
		}
		if err := sch.Validate(asJSON(t, bad)); err == nil {
			t.Errorf("the schema accepts %q, which the parser refuses", bad)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(gen, &doc); err != nil || !strings.Contains(string(gen), `"stuckAfter"`) {
		t.Fatalf("the schema names no policy key: %v", err)
	}
}
