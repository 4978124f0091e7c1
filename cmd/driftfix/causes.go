package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
)

// causesTable renders the classifier registry as the Markdown table of docs/causes-and-fixes.md.
func causesTable() string { return causesTableOf(classifiers.Registry) }

// causesTableOf renders a registry: each cause's order, name and meaning,
// and what the later stages read of it (classifiers.Classifier's facts).
func causesTableOf(registry []classifiers.Classifier) string {
	var b strings.Builder
	b.WriteString("| order | cause | meaning | predicted before merge | error in review | may stay ignored | suggested in review | fleet by | risk of removing it from Git |\n|---|---|---|---|---|---|---|---|---|\n")
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	for i, c := range registry {
		suggest := "-"
		if len(c.Suggest) > 0 {
			kinds := make([]string, len(c.Suggest))
			for j, k := range c.Suggest {
				kinds[j] = "`" + string(k) + "`"
			}
			suggest = strings.Join(kinds, ", ")
		}
		fleet := "-"
		if c.Fleet != classifiers.FleetNone {
			fleet = string(c.Fleet)
		}
		risk := "-"
		if c.Risk != "" {
			risk = c.Risk
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s | %s | %s | %s | %s |\n", i+1, c.Name, c.Doc, yes(c.Predicted), yes(c.Error), yes(c.MayStayIgnored), suggest, fleet, risk)
	}
	return b.String()
}

func (c *cli) causesCmd() *cobra.Command {
	return &cobra.Command{Use: "causes", Short: "Print the causes driftfix names, in the order they are tried", Args: noArgs,
		RunE: c.runE(func(*cobra.Command, []string) (int, error) { return writeTable(c.stdout, causesTable()) })}
}

// writeTable writes a reference table.
func writeTable(w io.Writer, s string) (int, error) {
	if _, err := io.WriteString(w, s); err != nil {
		return exitUsage, err
	}
	return exitClean, nil
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

func (c *cli) fixesCmd() *cobra.Command {
	return &cobra.Command{Use: "fixes", Short: "Print the fix kinds driftfix plans, in order of preference", Args: noArgs,
		RunE: c.runE(func(*cobra.Command, []string) (int, error) { return writeTable(c.stdout, fixesTable()) })}
}
