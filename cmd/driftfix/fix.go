package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/templates"
)

// maxRepoFile bounds the size of a manifest read from a checkout.
const maxRepoFile = 4 << 20

func (c *cli) fixCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fix --snapshot FILE [--repo DIR | --dry-run]",
		Short: "Plan the narrowest fix of a snapshot's findings and write it into a checkout",
		Example: `  driftfix fix --snapshot web.json --dry-run
  driftfix fix --snapshot web.json --repo ~/src/deploy`,
		Args: noArgs,
	}
	fs := cmd.Flags()
	snapshot := fs.StringP("snapshot", "f", "", "snapshot file to diagnose (YAML or JSON, driftfix/v1)")
	repoDir := fs.String("repo", "", "checkout of the application's repository; without it the snapshot's repo files are used (dry run only)")
	dryRun := fs.Bool("dry-run", false, "print the planned edits as a unified diff and write nothing")
	_ = cmd.MarkFlagFilename("snapshot", "json", "yaml", "yml")
	_ = cmd.MarkFlagDirname("repo")
	output := c.addOutput(cmd, "text", "json", "yaml")
	cmd.RunE = c.runE(func(*cobra.Command, []string) (int, error) {
		return fix(*snapshot, *repoDir, *dryRun, output, c.stdout, c.now())
	})
	return cmd
}

func fix(snapshot, repoDir string, dryRun bool, output *outputs, stdout io.Writer, now time.Time) (int, error) {
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	switch {
	case snapshot == "":
		return exitUsage, fmt.Errorf("--snapshot FILE is required")
	case repoDir == "" && !dryRun:
		return exitUsage, fmt.Errorf("--repo DIR is required to write fixes (or use --dry-run to see them)")
	}
	snap, err := loadSnapshot(snapshot)
	if err != nil {
		return exitUsage, err
	}
	repo := remediations.RepoFromSnapshot(snap)
	if repoDir != "" {
		if repo, err = readRepo(repoDir); err != nil {
			return exitUsage, err
		}
	}
	rep, plans, err := pipeline.Fix(snap, repo, drift.Sensitivity{}, now, render.Limits{})
	if err != nil {
		return exitUsage, err
	}
	files := remediations.Files(plans)
	if format != "text" {
		if err := writePlans(stdout, plans, format); err != nil {
			return exitUsage, err
		}
	} else {
		writePlansText(stdout, rep, plans, dryRun)
	}
	if !dryRun && len(files) > 0 {
		if err := writeFiles(repoDir, files); err != nil {
			return exitUsage, err
		}
		if format == "text" {
			for _, f := range files {
				fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(repoDir, f.File))
			}
		}
	}
	if len(rep.Findings) > 0 {
		return exitDrift, nil
	}
	return exitClean, nil
}

// readable says whether readRepo reads a file: manifests, templates and
// kustomizations, the JSON an ApplicationSet's git files generator reads,
// and the Makefiles and scripts that tell a vendored copy (see
// remediations' vendored.go).
func readable(name string) bool {
	for _, ext := range []string{".yaml", ".yml", ".tpl", ".json", ".mk", ".sh"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return name == "Kustomization" || name == "Makefile" || name == "GNUmakefile"
}

// readRepo reads the files of a checkout a fix reads (readable), skipping .git.
func readRepo(dir string) (remediations.Repo, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("read repository: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("read repository: %s is not a directory", dir)
	}
	repo := remediations.Repo{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !readable(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxRepoFile || !info.Mode().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		repo[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read repository %s: %w", dir, err)
	}
	return repo, nil
}

// writeFiles writes every changed file or none: all contents go to temporary
// files first, which are renamed into place only when all were written.
func writeFiles(dir string, files []remediations.Edit) error {
	type pending struct{ tmp, dst string }
	var done []pending
	cleanup := func() {
		for _, p := range done {
			os.Remove(p.tmp)
		}
	}
	for _, f := range files {
		dst := filepath.Join(dir, filepath.FromSlash(f.File))
		cur, err := os.ReadFile(dst)
		if err != nil || string(cur) != string(f.Before) {
			cleanup()
			return fmt.Errorf("write %s: the file changed since it was read", dst)
		}
		info, err := os.Stat(dst)
		if err != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", dst, err)
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".driftfix-*")
		if err != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", dst, err)
		}
		done = append(done, pending{tmp.Name(), dst})
		_, werr := tmp.Write(f.After)
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), info.Mode().Perm())
		}
		if werr != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", dst, werr)
		}
	}
	for _, p := range done {
		if err := os.Rename(p.tmp, p.dst); err != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", p.dst, err)
		}
	}
	return nil
}

func writePlansText(w io.Writer, rep *drift.Report, plans []remediations.Plan, dryRun bool) {
	var buf bytes.Buffer
	defer func() { w.Write(buf.Bytes()) }()
	if len(rep.Findings) == 0 {
		fmt.Fprintf(&buf, "Application %s: no drift found, nothing to fix.\n", templates.Terminal(rep.Application))
		return
	}
	fmt.Fprintf(&buf, "Application %s: %d %s, %d %s.\n", templates.Terminal(rep.Application), len(rep.Findings), plural(len(rep.Findings), "finding", "findings"), len(plans), plural(len(plans), "fix planned", "fixes planned"))
	for _, f := range rep.Findings {
		if f.Remediation.Kind == drift.FixNone {
			buf.WriteByte('\n')
			writeWrapped(&buf, "== not fixed: ", templates.Terminal(fmt.Sprintf("%s %s (%s): %s", f.Resource, f.Path, f.Cause, f.Remediation.Reason)))
		}
	}
	for _, p := range plans {
		buf.WriteByte('\n')
		writeWrapped(&buf, "== ", templates.Terminal(fmt.Sprintf("%s for %s (%s)", p.Kind, p.Resource, p.Rationale.Cause)))
		for _, f := range p.Findings {
			writeWrapped(&buf, "   fixes ", templates.Terminal(fmt.Sprintf("%s %s", f.Resource, f.Path)))
		}
		if p.Dropped != "" {
			writeWrapped(&buf, "   not proposed: ", templates.Terminal(p.Dropped))
			continue
		}
		if p.Rationale.Why != "" {
			writeWrapped(&buf, "   why: ", templates.Terminal(p.Rationale.Why))
		}
		if p.Rationale.Risk != "" {
			writeWrapped(&buf, "   risk: ", templates.Terminal(p.Rationale.Risk))
		}
		if p.Verified() {
			writeWrapped(&buf, "   verified: ", templates.Terminal(p.Verification))
		} else {
			writeWrapped(&buf, "   not verified: ", "driftfix edits no file for this fix; make the change below by hand")
		}
		if p.Instructions != "" {
			// line by line: the rule's layout stays, a value from the cluster
			// (an owner's name, a tracking id) cannot drive the terminal
			lines := strings.Split(strings.TrimSpace(p.Instructions), "\n")
			for i, l := range lines {
				lines[i] = templates.Terminal(l)
			}
			writeWrapped(&buf, "   to do by hand: ", strings.Join(lines, "\n"))
		}
		if dryRun {
			for _, e := range p.Edits {
				fmt.Fprintf(&buf, "\n%s", remediations.UnifiedDiff(e.File, e.Before, e.After))
			}
		}
	}
}

type planJSON struct {
	Kind      drift.FixKind     `json:"kind"`
	Resource  drift.Ref         `json:"resource"`
	Findings  []planFindingJSON `json:"findings"`
	Edits     []editJSON        `json:"edits"`
	Rationale rationaleJSON     `json:"rationale"`
	// Verified is remediations.Plan.Verified: false for a plan that edits no file.
	Verified     bool   `json:"verified"`
	Verification string `json:"verification,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	Dropped      string `json:"dropped,omitempty"`
}

type planFindingJSON struct {
	Resource drift.Ref   `json:"resource"`
	Path     string      `json:"path"`
	Cause    drift.Cause `json:"cause"`
}

type editJSON struct {
	File string `json:"file"`
	Diff string `json:"diff"`
}

type rationaleJSON struct {
	Cause    drift.Cause      `json:"cause"`
	Evidence []drift.Evidence `json:"evidence"`
	Why      string           `json:"why,omitempty"`
	Risk     string           `json:"risk,omitempty"`
	Undo     string           `json:"undo,omitempty"`
}

// writePlans writes the plans as JSON or YAML (format).
func writePlans(w io.Writer, plans []remediations.Plan, format string) error {
	out := make([]planJSON, 0, len(plans))
	for _, p := range plans {
		pj := planJSON{Kind: p.Kind, Resource: p.Resource, Edits: []editJSON{}, Verified: p.Verified(), Instructions: p.Instructions, Dropped: p.Dropped,
			Rationale: rationaleJSON{Cause: p.Rationale.Cause, Evidence: p.Rationale.Evidence, Why: p.Rationale.Why, Risk: p.Rationale.Risk, Undo: p.Rationale.Undo}}
		if pj.Verified {
			pj.Verification = p.Verification
		}
		for _, f := range p.Findings {
			pj.Findings = append(pj.Findings, planFindingJSON{Resource: f.Resource, Path: f.Path.String(), Cause: f.Cause})
		}
		for _, e := range p.Edits {
			pj.Edits = append(pj.Edits, editJSON{File: e.File, Diff: remediations.UnifiedDiff(e.File, e.Before, e.After)})
		}
		out = append(out, pj)
	}
	v := map[string]any{"plans": out}
	raw, err := indentJSON(v)
	if format == "yaml" {
		raw, err = jsonAsYAML(v)
	}
	if err != nil {
		return fmt.Errorf("encode plans: %w", err)
	}
	_, err = w.Write(raw)
	return err
}
