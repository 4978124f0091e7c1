package driftfix_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a function's length, from its func keyword to its
// closing brace: a longer one is split before it grows further.
const maxFuncLines = 150

// longFuncs are the functions longer than maxFuncLines when the bound was
// set, by file and name, with their length then: each is to be split, and
// none may grow. A function split below the bound is taken off the list.
var longFuncs = map[string]int{}

// TestFunctionLength keeps every function of the module, tests included,
// within maxFuncLines, except in the emulators (the packages under bot/
// whose name ends in "test": the Argo CD, GitHub, Slack and Kubernetes
// stand-ins and the test helpers) and the functions of longFuncs, which
// may not grow.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "test") && strings.HasPrefix(p, "bot"+string(filepath.Separator))) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != "." {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Pos()).Line + 1
			key := filepath.ToSlash(p) + " " + fn.Name.Name
			if was, ok := longFuncs[key]; ok {
				seen[key] = true
				if lines > was {
					t.Errorf("%s: %d lines, grown from %d; split it (the bound is %d)", key, lines, was, maxFuncLines)
				}
				continue
			}
			if lines > maxFuncLines {
				t.Errorf("%s: %d lines, over %d; split it", key, lines, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range longFuncs {
		if !seen[key] {
			t.Logf("%s is no longer found: take it off longFuncs", key)
		}
	}
}
