package driftfix_test

import (
	"os/exec"
	"strings"
	"testing"
)

// quantityParser is apimachinery's quantity parser and what it links.
var quantityParser = []string{"k8s.io/apimachinery/pkg/api/resource", "k8s.io/apimachinery/pkg/runtime/serializer/cbor/",
	"gopkg.in/inf.v0", "github.com/fxamacker/cbor", "github.com/x448/float16", "sigs.k8s.io/json"}

// TestLayering keeps the data flow one way: each package imports only what
// the design allows, and nothing that diagnoses a snapshot can reach a network.
func TestLayering(t *testing.T) {
	const mod = "github.com/driftfix/driftfix/"
	rules := []struct {
		pkg     string
		allowed []string // module packages and third-party prefixes it may depend on
	}{
		// bot/drift reads quantities with apimachinery's own parser.
		{"bot/drift", append([]string{"go.yaml.in/yaml/v3"}, quantityParser...)},
		// classifiers asks the API server's own admission matchers
		// (k8s.io/apiserver's webhook predicates) which webhooks admit an
		// object; they link apimachinery, client-go's listers, CEL and the
		// component metrics, never called for I/O.
		{"classifiers", []string{mod + "bot/drift", "go.yaml.in/yaml/v3", "k8s.io/", "sigs.k8s.io/", "cel.dev/expr", "github.com/antlr4-go/",
			"github.com/beorn7/", "github.com/blang/", "github.com/cespare/", "github.com/davecgh/", "github.com/emicklei/", "github.com/fxamacker/cbor",
			"github.com/go-logr/logr", "github.com/go-openapi/", "github.com/google/", "github.com/json-iterator/go", "github.com/modern-go/",
			"github.com/munnerz/goautoneg", "github.com/pmezard/", "github.com/prometheus/", "github.com/spf13/pflag", "github.com/x448/float16",
			"go.opentelemetry.io/otel", "go.yaml.in/yaml", "golang.org/x/", "google.golang.org/genproto", "google.golang.org/protobuf",
			"gopkg.in/evanphx/", "gopkg.in/inf.v0"}},
		// bot/appset renders ApplicationSet templates as Argo CD does: sprig
		// (and what it links) for goTemplate, gosimple/slug for slugify,
		// sigs.k8s.io/yaml for generator files; it reads no network.
		{"bot/appset", append([]string{mod + "bot/drift", "go.yaml.in/yaml/", "sigs.k8s.io/yaml", "github.com/Masterminds/", "github.com/gosimple/",
			"dario.cat/mergo", "github.com/google/uuid", "github.com/huandu/xstrings", "github.com/mitchellh/", "github.com/shopspring/decimal",
			"github.com/spf13/cast", "golang.org/x/crypto/"}, quantityParser...)},
		{"remediations/yamledit", append([]string{mod + "bot/drift", "go.yaml.in/yaml/v3"}, quantityParser...)},
		{"bot/diff", []string{mod + "bot/drift", "go.yaml.in/yaml/v3", "k8s.io/", "sigs.k8s.io/", "github.com/itchyny/gojq", "github.com/itchyny/timefmt-go", "github.com/gobwas/glob",
			"github.com/fxamacker/cbor", "github.com/x448/float16", "github.com/go-logr/logr", "github.com/json-iterator/go", "github.com/modern-go/",
			"go.yaml.in/yaml", "golang.org/x/net", "golang.org/x/text", "gopkg.in/inf.v0", "github.com/google/gnostic-models", "google.golang.org/protobuf", "github.com/kr/text"}},
	}
	forbidden := []string{"net/http", "os/exec", "net/rpc"}
	// remediations renders Helm charts, Kustomize builds and Jsonnet (google/go-jsonnet) in process; helm's
	// engine links client-go for lookup, so direct imports are what is checked.
	// argocd-cm's kustomize.buildOptions are parsed by kustomize's own build
	// flags, which are pflag flags.
	direct, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "./remediations", "./remediations/render").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(direct)) {
		if strings.HasPrefix(imp, "net") || imp == "os/exec" || imp == "os" {
			t.Errorf("remediations imports %s: planning a fix does no I/O", imp)
		}
		if strings.Contains(strings.Split(imp, "/")[0], ".") && !strings.HasPrefix(imp, mod) && !strings.HasPrefix(imp, "go.yaml.in/yaml/v3") && !strings.HasPrefix(imp, "helm.sh/helm/v3/") && !strings.HasPrefix(imp, "sigs.k8s.io/kustomize/") && imp != "github.com/pmezard/go-difflib/difflib" && imp != "github.com/spf13/pflag" && imp != "github.com/google/go-jsonnet" && imp != "sigs.k8s.io/yaml" {
			t.Errorf("remediations imports %s, which the design does not allow", imp)
		}
	}
	// The policy reads the registries (classifiers.Registry, remediations.Remedies)
	// for its names and decides which fix kinds are planned; the stages it
	// tunes never read the policy.
	policy, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "./bot/config").Output()
	if err != nil {
		t.Fatalf("go list ./bot/config: %v", err)
	}
	for _, imp := range strings.Fields(string(policy)) {
		if strings.HasPrefix(imp, mod) && imp != mod+"bot/drift" && imp != mod+"classifiers" && imp != mod+"remediations" {
			t.Errorf("bot/config imports %s; the policy may read only the vocabulary and the registries", imp)
		}
	}
	for _, pkg := range []string{"./classifiers", "./remediations", "./remediations/render", "./remediations/yamledit", "./bot/diff", "./bot/drift", "./bot/ignores", "./bot/fights", "./bot/appset", "./templates"} {
		deps, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(deps)) {
			if dep == mod+"bot/config" {
				t.Errorf("%s depends on bot/config: the policy is decided above the stages it tunes", pkg)
			}
		}
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", "./"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", r.pkg, err)
		}
		direct, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "./"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list ./%s: %v", r.pkg, err)
		}
		for _, imp := range strings.Fields(string(direct)) {
			if strings.HasPrefix(imp, "net") || imp == "os/exec" {
				t.Errorf("%s imports %s: a stage before publishing must not reach the network or run programs", r.pkg, imp)
			}
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+r.pkg {
				continue
			}
			for _, f := range forbidden {
				// bot/diff reads Kubernetes' compiled-in types, and apimachinery
				// links net/http; for it only direct imports are checked below.
				// classifiers links client-go through the API server's
				// admission matchers; the same holds for it.
				if dep == f && r.pkg != "bot/diff" && r.pkg != "classifiers" {
					t.Errorf("%s depends on %s: a stage before publishing must not reach the network or run programs", r.pkg, dep)
				}
			}
			if !strings.Contains(strings.Split(dep, "/")[0], ".") {
				continue // standard library
			}
			ok := false
			for _, a := range r.allowed {
				if strings.HasPrefix(dep, a) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s depends on %s, which the design does not allow", r.pkg, dep)
			}
		}
	}
}

// TestStageImports keeps each stage's direct imports to the stages before
// it: collecting decides no cause, the pipeline reaches no network, and the
// publisher knows its outside world only through its ports (bot/githost
// values, the GitHost and Notifier interfaces), never a host's or Slack's
// package, and decides no cause.
func TestStageImports(t *testing.T) {
	const mod = "github.com/driftfix/driftfix/"
	rules := []struct {
		pkg       string
		forbidden []string // module packages (or prefixes) it must not import directly
		network   bool     // whether it may import net packages
	}{
		{"bot/collect", []string{mod + "bot/pipeline", mod + "classifiers", mod + "remediations", mod + "bot/publish", mod + "bot/plan"}, false},
		{"bot/pipeline", []string{mod + "bot/argocd", mod + "bot/kube", mod + "bot/gitrepo", mod + "bot/github", mod + "bot/slack", mod + "bot/state", mod + "bot/collect", mod + "bot/plan", mod + "bot/publish"}, false},
		{"bot/plan", []string{mod + "bot/github", mod + "bot/slack", mod + "bot/state", mod + "bot/publish"}, false},
		{"bot/publish", []string{mod + "bot/github", mod + "bot/slack", mod + "bot/argocd", mod + "bot/kube", mod + "classifiers", mod + "remediations", mod + "bot/diff", mod + "bot/pipeline", mod + "bot/collect", "github.com/google/go-github", "github.com/slack-go"}, false},
		{"bot/githost", []string{mod}, false},
		// The ignore-rule inventory judges rules with the diff's evaluator and
		// reads nothing itself: collecting (and Git history) is the caller's.
		{"bot/ignores", []string{mod + "bot/argocd", mod + "bot/kube", mod + "bot/gitrepo", mod + "bot/github", mod + "bot/slack", mod + "bot/state", mod + "bot/collect", mod + "bot/plan", mod + "bot/publish", mod + "bot/pipeline", mod + "bot/config", mod + "classifiers", mod + "remediations"}, false},
		// The memo keeps what a cycle gave and writes and reads its records
		// through the store it is handed; it reads nothing else and decides
		// neither a cause nor a fix (when to reuse is the cycle's).
		{"bot/memo", []string{mod + "bot/argocd", mod + "bot/kube", mod + "bot/gitrepo", mod + "bot/github", mod + "bot/slack", mod + "bot/state", mod + "bot/collect", mod + "bot/plan", mod + "bot/publish", mod + "bot/pipeline", mod + "classifiers"}, false},
		// The proposed values are filled by the planning stage, kept by the
		// memo and published by the publisher; they read nothing and import
		// none of the three.
		{"bot/proposals", []string{mod + "bot/argocd", mod + "bot/kube", mod + "bot/gitrepo", mod + "bot/github", mod + "bot/slack", mod + "bot/state", mod + "bot/collect", mod + "bot/plan", mod + "bot/publish", mod + "bot/pipeline", mod + "bot/memo"}, false},
		// Fights are told from what the caller kept across cycles; telling
		// them reads nothing.
		{"bot/fights", []string{mod + "bot/argocd", mod + "bot/kube", mod + "bot/gitrepo", mod + "bot/github", mod + "bot/slack", mod + "bot/state", mod + "bot/collect", mod + "bot/plan", mod + "bot/publish", mod + "bot/pipeline", mod + "bot/config", mod + "classifiers", mod + "remediations"}, false},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "./"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list ./%s: %v", r.pkg, err)
		}
		for _, imp := range strings.Fields(string(out)) {
			if !r.network && (strings.HasPrefix(imp, "net") || imp == "os/exec") {
				t.Errorf("%s imports %s: its stage does no I/O of its own", r.pkg, imp)
			}
			for _, f := range r.forbidden {
				if strings.HasPrefix(imp, f) {
					t.Errorf("%s imports %s, which is not a stage before it", r.pkg, imp)
				}
			}
		}
	}
}
