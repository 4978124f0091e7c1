package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// maxRepoFile bounds the size of a manifest read from a checkout.
const maxRepoFile = 4 << 20

func cmdFix(_ context.Context, args []string, stdout, stderr io.Writer, now time.Time) (int, error) {
	fs := flag.NewFlagSet("fix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	snapshot := fs.String("snapshot", "", "snapshot file to diagnose (YAML or JSON, driftfix/v1)")
	repoDir := fs.String("repo", "", "checkout of the application's repository; without it the snapshot's repo files are used (dry run only)")
	dryRun := fs.Bool("dry-run", false, "print the planned edits as a unified diff and write nothing")
	output := registerOutput(fs, "text", "json", "yaml")
	if err := fs.Parse(args); err != nil {
		return exitUsage, err
	}
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	switch {
	case fs.NArg() > 0:
		return exitUsage, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *snapshot == "":
		return exitUsage, fmt.Errorf("--snapshot FILE is required")
	case *repoDir == "" && !*dryRun:
		return exitUsage, fmt.Errorf("--repo DIR is required to write fixes (or use --dry-run to see them)")
	}
	snap, err := drift.LoadSnapshot(*snapshot)
	if err != nil {
		return exitUsage, err
	}
	repo := remediations.RepoFromSnapshot(snap)
	if *repoDir != "" {
		if repo, err = readRepo(*repoDir); err != nil {
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
		writePlansText(stdout, rep, plans, *dryRun)
	}
	if !*dryRun && len(files) > 0 {
		if err := writeFiles(*repoDir, files); err != nil {
			return exitUsage, err
		}
		if format == "text" {
			for _, f := range files {
				fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(*repoDir, f.File))
			}
		}
	}
	if len(rep.Findings) > 0 {
		return exitDrift, nil
	}
	return exitClean, nil
}

// readRepo reads the YAML files of a checkout, skipping .git.
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
		if !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml") && !strings.HasSuffix(p, ".tpl") && d.Name() != "Kustomization" {
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
	if len(rep.Findings) == 0 {
		fmt.Fprintf(w, "Application %s: no drift found, nothing to fix.\n", rep.Application)
		return
	}
	fmt.Fprintf(w, "Application %s: %d %s, %d %s.\n", rep.Application, len(rep.Findings), plural(len(rep.Findings), "finding", "findings"), len(plans), plural(len(plans), "fix planned", "fixes planned"))
	for _, f := range rep.Findings {
		if f.Remediation.Kind == drift.FixNone {
			fmt.Fprintf(w, "\n== not fixed: %s %s (%s): %s\n", f.Resource, f.Path, f.Cause, f.Remediation.Reason)
		}
	}
	for _, p := range plans {
		fmt.Fprintf(w, "\n== %s for %s (%s)\n", p.Kind, p.Resource, p.Rationale.Cause)
		for _, f := range p.Findings {
			fmt.Fprintf(w, "   fixes %s %s\n", f.Resource, f.Path)
		}
		if p.Dropped != "" {
			fmt.Fprintf(w, "   not proposed: %s\n", p.Dropped)
			continue
		}
		if p.Rationale.Why != "" {
			fmt.Fprintf(w, "   why: %s\n", p.Rationale.Why)
		}
		if p.Rationale.Risk != "" {
			fmt.Fprintf(w, "   risk: %s\n", p.Rationale.Risk)
		}
		fmt.Fprintf(w, "   verified: %s\n", p.Verification)
		if p.Instructions != "" {
			fmt.Fprintf(w, "   to do by hand: %s\n", strings.ReplaceAll(strings.TrimSpace(p.Instructions), "\n", "\n     "))
		}
		if dryRun {
			for _, e := range p.Edits {
				fmt.Fprintf(w, "\n%s", remediations.UnifiedDiff(e.File, e.Before, e.After))
			}
		}
	}
}

type planJSON struct {
	Kind         drift.FixKind     `json:"kind"`
	Resource     drift.Ref         `json:"resource"`
	Findings     []planFindingJSON `json:"findings"`
	Edits        []editJSON        `json:"edits"`
	Rationale    rationaleJSON     `json:"rationale"`
	Verification string            `json:"verification,omitempty"`
	Instructions string            `json:"instructions,omitempty"`
	Dropped      string            `json:"dropped,omitempty"`
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
	Cause    drift.Cause `json:"cause"`
	Evidence []string    `json:"evidence"`
	Why      string      `json:"why,omitempty"`
	Risk     string      `json:"risk,omitempty"`
	Undo     string      `json:"undo,omitempty"`
}

// writePlans writes the plans as JSON or YAML (format).
func writePlans(w io.Writer, plans []remediations.Plan, format string) error {
	out := make([]planJSON, 0, len(plans))
	for _, p := range plans {
		pj := planJSON{Kind: p.Kind, Resource: p.Resource, Edits: []editJSON{}, Verification: p.Verification, Instructions: p.Instructions, Dropped: p.Dropped,
			Rationale: rationaleJSON{Cause: p.Rationale.Cause, Evidence: p.Rationale.Evidence, Why: p.Rationale.Why, Risk: p.Rationale.Risk, Undo: p.Rationale.Undo}}
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
