//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

func init() { mainHWM = runHWM }

// runHWM is main for a benchmark: driftfix runs, then writes its peak
// resident memory in bytes (the kernel's VmHWM of this process; the
// rusage of a child started from the large test binary counts the
// parent's memory before exec too) to the file DRIFTFIX_TEST_HWM names.
func runHWM(file string) {
	code := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, "driftfix")
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			if err != nil {
				panic(err)
			}
			if err := os.WriteFile(file, []byte(strconv.FormatInt(n*1024, 10)), 0o600); err != nil {
				panic(err)
			}
		}
	}
	os.Exit(code)
}

// BenchmarkDiagnoseSnapshot runs `driftfix diagnose --snapshot FILE -o json`
// as a process of its own on a 20,000-resource snapshot (resources cloned
// from the testdata cases), as JSON and as YAML, and the JSON file with the
// default text output (json-to-text) and -o yaml (json-to-yaml), and reports the process'
// peak resident memory (peak-rss-MB, the kernel's maximum RSS, the
// binary's own pages included), the input's size (input-MB; JSON compact,
// YAML as driftfix snapshot -o yaml writes it) and their ratio (rss/input;
// issue 32's target is under 5), and the same command's peak on a snapshot
// of one resource (base-rss-MB) with what the input adds to it, per input
// byte (added-rss/input):
//
//	go test ./cmd/driftfix -run '^$' -bench DiagnoseSnapshot -benchtime 1x
func BenchmarkDiagnoseSnapshot(b *testing.B) {
	dir := b.TempDir()
	snap := benchSnapshot(b, 20000)
	raw, err := json.Marshal(snap)
	if err != nil {
		b.Fatal(err)
	}
	y, err := jsonAsYAML(snap) // as driftfix snapshot -o yaml writes it
	if err != nil {
		b.Fatal(err)
	}
	files := map[string][]byte{"json": raw, "yaml": y}
	// The process' own pages (a binary of about 125 MB whose package
	// initialisation touches most of them) are measured on a snapshot of one
	// resource, and the input's share is what a large one adds.
	small, err := json.Marshal(benchSnapshot(b, 1))
	if err != nil {
		b.Fatal(err)
	}
	smallFile := filepath.Join(dir, "small.json")
	if err := os.WriteFile(smallFile, small, 0o600); err != nil {
		b.Fatal(err)
	}
	base := peakRSS(b, dir, smallFile, "json")
	if d := os.Getenv("DRIFTFIX_BENCH_KEEP"); d != "" {
		os.WriteFile(filepath.Join(d, "snapshot.json"), raw, 0o600)
		os.WriteFile(filepath.Join(d, "snapshot.yaml"), y, 0o600)
	}
	for _, run := range []struct{ name, format, output string }{
		{"json", "json", "json"},
		{"yaml", "yaml", "json"},
		{"json-to-text", "json", "text"}, // the default output
		{"json-to-yaml", "json", "yaml"},
	} {
		format := run.format
		file := filepath.Join(dir, "snapshot."+format)
		if err := os.WriteFile(file, files[format], 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s/resources=20000", run.name), func(b *testing.B) {
			var peak int64
			for i := 0; i < b.N; i++ {
				peak = max(peak, peakRSS(b, dir, file, run.output))
			}
			in := float64(len(files[format])) / (1 << 20)
			b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MB")
			b.ReportMetric(in, "input-MB")
			b.ReportMetric(float64(peak)/(1<<20)/in, "rss/input")
			b.ReportMetric(float64(base)/(1<<20), "base-rss-MB")
			b.ReportMetric(float64(peak-base)/(1<<20)/in, "added-rss/input")
		})
	}
}

// benchSnapshot is an application of n resources cloned, under new names,
// from the testdata cases that carry a mix of causes (the clean, server
// defaults, HPA, webhook, quantity and manual-edit cases), with their
// cluster context.
func benchSnapshot(b *testing.B, n int) *drift.Snapshot {
	b.Helper()
	out := &drift.Snapshot{}
	var pool []drift.Resource
	for _, name := range []string{"01-hpa-statefulset", "11-builtin-quantity-hidden", "05-cabundle-cainjector-ssa", "17-webhook-adds-label",
		"12-builtin-unknown-field", "21-manual-kubectl-patch", "30-secret-stringdata", "09-cr-quantity-conversion", "16-empty-values-dropped"} {
		s, err := drift.LoadSnapshot(filepath.Join("..", "..", "testdata", "cases", name+".yaml"))
		if err != nil {
			b.Fatal(err)
		}
		if out.Application == nil {
			out.Application = s.Application
		}
		pool = append(pool, s.Resources...)
		out.Cluster = append(out.Cluster, s.Cluster...)
	}
	for i := 0; len(out.Resources) < n; i++ {
		r := pool[i%len(pool)]
		c := drift.Resource{}
		for _, side := range []struct{ from, to *drift.Object }{{&r.Target, &c.Target}, {&r.Live, &c.Live}} {
			if *side.from == nil {
				continue
			}
			o := drift.DeepCopy(*side.from).(map[string]any)
			md := o["metadata"].(map[string]any)
			md["name"] = fmt.Sprintf("%s-%d", md["name"], i)
			*side.to = o
		}
		out.Resources = append(out.Resources, c)
	}
	return out
}

// peakRSS runs driftfix diagnose on a snapshot file and returns its peak
// resident memory in bytes.
func peakRSS(b *testing.B, dir, file, output string) int64 {
	b.Helper()
	hwm := filepath.Join(dir, "hwm")
	cmd := exec.Command(os.Args[0], "diagnose", "--snapshot", file, "-o", output)
	cmd.Env = append(os.Environ(), "DRIFTFIX_TEST_MAIN=1", "DRIFTFIX_TEST_HWM="+hwm)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitDrift && code != exitClean {
		b.Fatalf("diagnose: exit %d (%v)", code, err)
	}
	raw, err := os.ReadFile(hwm)
	if err != nil {
		b.Fatal(err)
	}
	rss, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return rss
}
