package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/templates"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

func (c *cli) diagnoseCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diagnose [NAMESPACE/]APP | diagnose --snapshot FILE",
		Short: "Name the cause and the fix of every field that keeps an application OutOfSync",
		Long: `Diagnoses one application: live from Argo CD (APP, or NAMESPACE/APP for an
Application outside Argo CD's namespace), or offline from a snapshot file
(--snapshot FILE, written by "driftfix snapshot").`,
		Example: `  driftfix diagnose guestbook
  driftfix diagnose team-a/guestbook -o json
  driftfix diagnose --snapshot web.json`,
		Args: cobra.MaximumNArgs(1),
	}
	fs := cmd.Flags()
	snapshot := fs.StringP("snapshot", "f", "", "snapshot file to diagnose (YAML or JSON, driftfix/v1)")
	output := c.addOutput(cmd, "text", "json", "yaml", "wide")
	var af argoFlags
	af.register(cmd)
	appNS := addAppNamespace(cmd)
	cmd.RunE = c.runE(func(cmd *cobra.Command, args []string) (int, error) {
		return c.diagnose(cmd, args, *snapshot, output, &af, *appNS)
	})
	return cmd
}

func (c *cli) diagnose(cmd *cobra.Command, args []string, snapshot string, output *outputs, af *argoFlags, appNS string) (int, error) {
	ctx, stdout, stderr := c.ctx, c.stdout, c.stderr
	live := len(args) > 0
	switch {
	case live && snapshot == "" && isFile(args[0]) && !af.serverGiven(cmd):
		// A name without a flag is an application, as in `argocd app diff
		// NAME` and kubectl: files come with a flag. driftfix does not guess
		// which was meant.
		return exitUsage, fmt.Errorf("%q is a file: to diagnose a snapshot, use --snapshot %s (a name without --snapshot is an Argo CD application; with --argocd-server it is diagnosed live)", args[0], args[0])
	case live && snapshot != "":
		return exitUsage, fmt.Errorf("give an application or --snapshot FILE, not both")
	case !live && snapshot == "":
		return exitUsage, fmt.Errorf("--snapshot FILE (or an application name) is required")
	}
	format, err := output.value()
	if err != nil {
		return exitUsage, err
	}
	var snap *drift.Snapshot
	var rep *drift.Report
	if !live {
		// A snapshot file is read and diagnosed a part at a time where it
		// can be (a large one is never held whole), else whole below. As
		// JSON, each part's findings are held as the text written.
		var ok bool
		if e, held := encoded[format]; held {
			var enc *drift.EncodedReport
			if enc, ok, err = pipeline.DiagnoseFileEncoded(snapshot, drift.Limits{}, drift.Sensitivity{}, e.encode); err != nil {
				return exitUsage, err
			}
			if ok {
				if err := e.write(stdout, enc.Application, enc.SyncStatus, enc.Findings); err != nil {
					return exitUsage, fmt.Errorf("write report: %w", err)
				}
				if len(enc.Findings) > 0 {
					return exitDrift, nil
				}
				return exitClean, nil
			}
		} else if rep, ok, err = pipeline.DiagnoseFile(snapshot, drift.Limits{}, drift.Sensitivity{}); err != nil {
			return exitUsage, err
		}
		if !ok {
			if snap, err = loadSnapshot(snapshot); err != nil {
				return exitUsage, err
			}
		}
	} else {
		ns, name, err := appName(args[0], appNS)
		if err != nil {
			return exitUsage, err
		}
		client, err := af.client()
		if err != nil {
			return exitUsage, err
		}
		if snap, err = liveSnapshot(ctx, client, ns, name, true); err != nil {
			return exitUsage, af.explain(err)
		}
		clusterCtx, err := af.cluster(ctx, stderr)
		if err != nil {
			return exitUsage, err
		}
		if clusterCtx != nil {
			collect.AddClusterContext(snap, clusterCtx(snap))
		}
		if af.repoFiles {
			addRepoFiles(ctx, snap, stderr)
		}
	}
	if rep == nil {
		if rep, err = pipeline.Diagnose(snap, drift.Sensitivity{}); err != nil {
			return exitUsage, err
		}
	}
	var out []byte
	switch format {
	case "json":
		// Written a finding at a time: a large report is never held as text.
		if err := rep.WriteJSON(stdout); err != nil {
			return exitUsage, fmt.Errorf("write report: %w", err)
		}
	case "yaml":
		out, err = yamlReport(rep)
	case "wide":
		out = wideReport(rep)
	default:
		out = textReport(rep)
	}
	if err != nil {
		return exitUsage, err
	}
	if _, err := stdout.Write(out); err != nil {
		return exitUsage, fmt.Errorf("write report: %w", err)
	}
	if len(rep.Findings) > 0 {
		return exitDrift, nil
	}
	return exitClean, nil
}

// encoded are the output formats a snapshot file's report is held in as
// the text written: each finding encoded as the format writes it (a large
// report is not held as findings that keep the values they show), and the
// report written from those.
var encoded = map[string]struct {
	encode func(*drift.Finding) ([]byte, error)
	write  func(w io.Writer, application, syncStatus string, findings [][]byte) error
}{
	"json": {drift.EncodeFinding, func(w io.Writer, application, syncStatus string, findings [][]byte) error {
		return (&drift.EncodedReport{Application: application, SyncStatus: syncStatus, Findings: findings}).WriteJSON(w)
	}},
	"text": {textBlock, writeText},
	"yaml": {yamlBlock, writeYAML},
}

// isFile says whether name is a regular file.
func isFile(name string) bool {
	st, err := os.Stat(name)
	return err == nil && st.Mode().IsRegular()
}

// yamlReport writes the JSON report as YAML, keeping its field names and order.
func yamlReport(rep *drift.Report) ([]byte, error) {
	raw, err := json.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return yamlOf(raw)
}

// yamlOf writes JSON as yamlReport writes it: block YAML, indent two.
func yamlOf(raw []byte) ([]byte, error) {
	var node yaml.Node
	if err := yaml.Unmarshal(raw, &node); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	clearStyle(&node)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&node); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return buf.Bytes(), nil
}

// yamlFindings starts the findings of a YAML report, as an item's block
// (yamlBlock) comes under it.
const yamlFindings = "findings:\n"

// yamlBlock is one finding as yamlReport writes it in the report's
// findings: a finding alone in them, written as the whole report's are.
func yamlBlock(f *drift.Finding) ([]byte, error) {
	raw, err := drift.EncodeFinding(f)
	if err != nil {
		return nil, err
	}
	doc, err := yamlOf(slices.Concat([]byte(`{"findings":[`), raw, []byte(`]}`)))
	if err != nil {
		return nil, err
	}
	block, ok := bytes.CutPrefix(doc, []byte(yamlFindings))
	if !ok {
		return nil, fmt.Errorf("encode report: a finding's YAML does not start with %q", yamlFindings)
	}
	return block, nil
}

// writeYAML writes the YAML report of blocks (yamlBlock), as yamlReport
// writes the report they were made from.
func writeYAML(w io.Writer, application, syncStatus string, blocks [][]byte) error {
	head, err := yamlReport(&drift.Report{Application: application, SyncStatus: syncStatus})
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if len(blocks) == 0 {
		bw.Write(head)
		return bw.Flush()
	}
	empty := []byte("findings: []\n")
	if !bytes.HasSuffix(head, empty) {
		return fmt.Errorf("encode report: its YAML does not end with %q", empty)
	}
	bw.Write(head[:len(head)-len(empty)])
	bw.WriteString(yamlFindings)
	for _, b := range blocks {
		bw.Write(b)
	}
	return bw.Flush()
}

// clearStyle drops the JSON flow style so the YAML reads as block YAML.
func clearStyle(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 && n.Tag == "!!str" {
		n.Style &^= yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		clearStyle(c)
	}
}

// textWidth is the width text output wraps at: a 120-column terminal.
const textWidth = 120

// textReport is what a person reads in a terminal: one block per finding,
// every value whole (wrapped, never cut, so two different values never
// print the same) and every line of evidence.
func textReport(rep *drift.Report) []byte {
	blocks := make([][]byte, len(rep.Findings))
	for i := range rep.Findings {
		blocks[i], _ = textBlock(&rep.Findings[i])
	}
	var buf bytes.Buffer
	writeText(&buf, rep.Application, rep.SyncStatus, blocks)
	return buf.Bytes()
}

// textBlock is one finding's block of the text report, without room to
// spare: a large report holds thousands.
func textBlock(f *drift.Finding) ([]byte, error) {
	buf := blockBuffers.Get().(*bytes.Buffer)
	defer blockBuffers.Put(buf)
	buf.Reset()
	writeTextFinding(buf, f)
	return bytes.Clone(buf.Bytes()), nil
}

// blockBuffers are the buffers textBlock writes a block in.
var blockBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeText writes the text report of blocks (textBlock), as textReport
// writes the report they were made from.
func writeText(w io.Writer, application, syncStatus string, blocks [][]byte) error {
	var head bytes.Buffer
	reportHeader(&head, application, syncStatus, len(blocks))
	bw := bufio.NewWriter(w)
	bw.Write(head.Bytes())
	for i, b := range blocks {
		if i > 0 {
			bw.WriteByte('\n')
		}
		bw.Write(b)
	}
	return bw.Flush()
}

// writeTextFinding writes a finding's block: its resource and path, then
// one field a line.
func writeTextFinding(buf *bytes.Buffer, f *drift.Finding) {
	fmt.Fprintf(buf, "%s %s\n", templates.Terminal(f.Resource), templates.Terminal(f.Path))
	// field writes "  name      value", value wrapped under itself (after
	// a bullet, under the bullet's text).
	field := func(name, bullet, value string) {
		writeWrapped(buf, "  "+name+strings.Repeat(" ", 10-len(name))+bullet, value)
	}
	field("cause", "", string(f.Cause))
	field("git", "", cellFull(f.Git, f.InGit))
	field("live", "", cellFull(f.ShownLive(), f.InLive))
	field("owner", "", templates.Terminal(owner(f.Owners)))
	for k, e := range f.Evidence {
		name := ""
		if k == 0 {
			name = "evidence"
		}
		field(name, "- ", templates.Terminal(e.Text))
	}
	fix := string(f.Remediation.Kind)
	if f.Remediation.File != "" {
		fix += " " + f.Remediation.File
	}
	if f.Remediation.Reason != "" {
		fix += ": " + f.Remediation.Reason
	}
	field("fix", "", templates.Terminal(fix))
}

// reportHeader writes the report's first line; false when nothing differs.
func reportHeader(buf *bytes.Buffer, application, syncStatus string, findings int) bool {
	status := syncStatus
	if status == "" {
		status = "unknown sync status"
	}
	if findings == 0 {
		fmt.Fprintf(buf, "Application %s (%s): no drift found.\n", templates.Terminal(application), templates.Terminal(status))
		return false
	}
	fmt.Fprintf(buf, "Application %s (%s): %d drifting %s.\n\n", templates.Terminal(application), templates.Terminal(status), findings, plural(findings, "field", "fields"))
	return true
}

// wideReport is the table of -o wide: one line per finding, every column
// whole, as wide as the values make it.
func wideReport(rep *drift.Report) []byte {
	var buf bytes.Buffer
	if !reportHeader(&buf, rep.Application, rep.SyncStatus, len(rep.Findings)) {
		return buf.Bytes()
	}
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tPATH\tGIT\tLIVE\tCAUSE\tOWNER\tEVIDENCE\tFIX")
	for _, f := range rep.Findings {
		fix := string(f.Remediation.Kind)
		if f.Remediation.File != "" {
			fix += " " + f.Remediation.File
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			flat(templates.Terminal(f.Resource)), flat(templates.Terminal(f.Path)), flat(cellFull(f.Git, f.InGit)), flat(cellFull(f.ShownLive(), f.InLive)),
			f.Cause, flat(owner(f.Owners)), flat(drift.EvidenceText(f.Evidence, "; ")), flat(fix))
	}
	tw.Flush()
	return buf.Bytes()
}

// cellFull is a value whole: a string quoted (so "2" and 2 differ), a map
// or list as JSON, "-" when absent on that side. Terminal control
// characters are made inert.
func cellFull(v any, present bool) string {
	if !present {
		return "-"
	}
	switch x := v.(type) {
	case string:
		return templates.Terminal(strconv.Quote(x))
	case map[string]any, []any:
		raw, err := json.Marshal(x)
		if err == nil {
			return templates.Terminal(string(raw))
		}
	}
	return templates.Terminal(drift.Brief(v, 0))
}

// writeWrapped writes prefix and text, wrapped at textWidth: at spaces where
// it can, else inside a long word; continuation lines are indented as far
// as the prefix. Nothing is cut.
func writeWrapped(buf *bytes.Buffer, prefix, text string) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	room := textWidth - utf8.RuneCountInString(prefix)
	lines := strings.Split(text, "\n")
	first := true
	for _, l := range lines {
		for {
			r := []rune(l)
			cut := len(r)
			if cut > room {
				cut = room
				if sp := strings.LastIndex(string(r[:room+1]), " "); sp > room/2 {
					cut = utf8.RuneCountInString(string(r[:room+1])[:sp])
				}
			}
			head := strings.TrimRight(string(r[:cut]), " ")
			if first {
				buf.WriteString(strings.TrimRight(prefix+head, " "))
				first = false
			} else {
				buf.WriteString(strings.TrimRight(indent+head, " "))
			}
			buf.WriteByte('\n')
			l = strings.TrimLeft(string(r[cut:]), " ")
			if l == "" {
				break
			}
		}
	}
}

func owner(os []drift.Owner) string {
	if len(os) == 0 {
		return "-"
	}
	o := os[len(os)-1]
	if o.Subresource != "" {
		return o.Manager + "/" + o.Subresource
	}
	return o.Manager
}

func first(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

// flat joins a text's lines and runs of spaces into single spaces.
func flat(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// oneLine is s flat, cut at max runes (predict's table).
func oneLine(s string, max int) string {
	s = flat(s)
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
