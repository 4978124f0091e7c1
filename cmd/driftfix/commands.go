package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// docsCmd writes the man pages (`driftfix docs man DIR`).
func (c *cli) docsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "docs",
		Short:  "Write driftfix's man pages",
		Hidden: true,
		Args:   noArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "man DIR",
		Short:   "Write a man page per command (section 1) into DIR",
		Example: "  driftfix docs man /usr/local/share/man/man1",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name the directory: %s DIR", cmd.CommandPath())
			}
			return nil
		},
		RunE: c.runE(func(cmd *cobra.Command, args []string) (int, error) {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return exitUsage, fmt.Errorf("man pages: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			hdr := &doc.GenManHeader{Title: "DRIFTFIX", Section: "1", Source: "driftfix " + version, Manual: "driftfix manual"}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return exitUsage, fmt.Errorf("man pages in %s: %w", dir, err)
			}
			n, _ := filepath.Glob(filepath.Join(dir, "*.1"))
			fmt.Fprintf(c.stdout, "wrote %d man pages in %s\n", len(n), dir)
			return exitClean, nil
		}),
	})
	return cmd
}

// loadSnapshot reads a snapshot file; a file that is a Kubernetes manifest
// (or anything else with a kind other than Snapshot) is named as such, with
// what to give instead.
func loadSnapshot(file string) (*drift.Snapshot, error) {
	s, err := drift.LoadSnapshot(file)
	if err == nil {
		return s, nil
	}
	if kind, apiVersion := manifestKind(file); kind != "" && kind != "Snapshot" {
		return nil, fmt.Errorf("%s is not a snapshot: it is a %s (%s); a snapshot is what `driftfix snapshot APP -f FILE` writes (apiVersion driftfix/v1, kind Snapshot)", file, kind, apiVersion)
	}
	return nil, err
}

// manifestKind is the kind and apiVersion of the first document of a YAML
// or JSON file, "" when it has none.
func manifestKind(file string) (kind, apiVersion string) {
	f, err := os.Open(file)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	var top struct {
		Kind       string `yaml:"kind"`
		APIVersion string `yaml:"apiVersion"`
	}
	if err := yaml.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&top); err != nil {
		return "", ""
	}
	return top.Kind, top.APIVersion
}
