package main

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/config"
)

// The references in docs/ are generated from the registries and the policy
// schema; TestGeneratedDocs fails when the committed files differ.
//go:generate go test -run ^TestGeneratedDocs$ -update .

// policyReference renders config.Schema as docs/policy-reference.md.
func policyReference() string {
	var b strings.Builder
	b.WriteString("# Policy reference\n\n")
	b.WriteString("<!-- Generated from bot/config/schema.go by `go generate ./cmd/driftfix`; do not edit. -->\n\n")
	b.WriteString("Every key of the policy file (`driftfix run --config FILE`), as the parser\n")
	b.WriteString("accepts it (`TestSchemaMatchesParser` holds the two together). A key in\n")
	b.WriteString("`a[].b` is `b` in each item of the list `a`; `<cause>` is any cause of\n")
	b.WriteString("[causes and fixes](causes-and-fixes.md). Check a file with\n")
	b.WriteString("`driftfix config validate FILE`: each problem is printed with its line and key.\n")
	b.WriteString("How to use them: [the policy](policy.md); a full example:\n")
	b.WriteString("[`deploy/driftfix.example.yaml`](../deploy/driftfix.example.yaml).\n")
	section := ""
	for _, k := range config.Schema {
		top, _, nested := strings.Cut(k.Path, ".")
		heading := "`" + strings.TrimSuffix(top, "[]") + "`"
		if !nested && k.Type != "list" && k.Type != "mapping" {
			heading = "Top-level settings"
		}
		if heading != section {
			section = heading
			fmt.Fprintf(&b, "\n## %s\n\n| key | type | default | meaning |\n|---|---|---|---|\n", section)
		}
		def := k.Default
		if def != "" {
			def = "`" + def + "`"
			if strings.Contains(k.Default, " ") && !strings.ContainsAny(k.Default, "*") {
				def = k.Default // prose such as "the server URL"
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Path, k.Type, def, strings.ReplaceAll(k.Doc, "|", `\|`))
	}
	return b.String()
}
