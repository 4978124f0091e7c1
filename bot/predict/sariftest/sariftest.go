// Package sariftest gives tests the official SARIF 2.1.0 JSON schema, as
// the go-sarif module ships it, compiled once: read from the module's
// source, not copied into this repository.
package sariftest

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	// The schema is the constant of this package's source.
	_ "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// startDir is the test's package directory, where the test binary starts
// (a test may change the working directory later).
var startDir, _ = os.Getwd()

// Schema returns the compiled SARIF 2.1.0 schema (the constant schema of
// go-sarif's v210 package), loaded on first use.
var Schema = sync.OnceValues(load)

func load() (*jsonschema.Schema, error) {
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/owenrumney/go-sarif/v3")
	list.Dir = startDir
	out, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("find the go-sarif module: %w", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "pkg", "report", "v210", "sarif", "schema.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		return nil, err
	}
	var text string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "schema" && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
				text, _ = strconv.Unquote(lit.Value)
			}
		}
		return true
	})
	if !strings.Contains(text, `"title": "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"`) {
		return nil, errors.New(file + " holds no SARIF 2.1.0 schema")
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("sarif-schema-2.1.0.json")
}
