package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
)

// causesTable renders the classifier registry as the Markdown table of docs/causes-and-fixes.md.
func causesTable() string {
	var b strings.Builder
	b.WriteString("| order | cause | meaning |\n|---|---|---|\n")
	for i, c := range classifiers.Registry {
		fmt.Fprintf(&b, "| %d | `%s` | %s |\n", i+1, c.Name, c.Doc)
	}
	return b.String()
}

func cmdCauses(stdout io.Writer) int {
	fmt.Fprint(stdout, causesTable())
	return exitClean
}

// fixesTable renders the remedy registry as the Markdown table of docs/causes-and-fixes.md.
func fixesTable() string {
	var b strings.Builder
	b.WriteString("| kind | what changes | pull request title |\n|---|---|---|\n")
	for _, r := range remediations.Remedies {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Kind, r.Doc, r.Title)
	}
	return b.String()
}

func cmdFixes(stdout io.Writer) int {
	fmt.Fprint(stdout, fixesTable())
	return exitClean
}
