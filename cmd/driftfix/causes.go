package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/driftfix/driftfix/classifiers"
)

// causesTable renders the classifier registry as the Markdown table in the README.
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
