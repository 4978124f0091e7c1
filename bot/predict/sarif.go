package predict

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// SARIF 2.1.0, the parts predict writes: one run, the tool with one rule per
// cause, one result per prediction.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// SARIF writes predictions as a SARIF 2.1.0 log: ruleId is the cause, the
// location the file (relative to the repository root) and line that declare
// the path. version is the tool's.
func SARIF(ps []Prediction, version string) ([]byte, error) {
	doc := sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0"}
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "driftfix", Version: version}}, Results: []sarifResult{}}
	docs := map[string]string{}
	for _, c := range classifiers.Registry {
		docs[string(c.Name)] = c.Doc
	}
	used := map[string]bool{}
	for _, p := range ps {
		used[string(p.Cause)] = true
		r := sarifResult{RuleID: string(p.Cause), Level: "warning", Message: sarifMessage{Text: message(p)}}
		if p.Cause == drift.CauseBroadIgnore {
			r.Level = "error"
		}
		if p.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: p.File}}}
			if p.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: p.Line}
			}
			r.Locations = []sarifLocation{loc}
		}
		run.Results = append(run.Results, r)
	}
	var ids []string
	for id := range used {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	run.Tool.Driver.Rules = []sarifRule{}
	for _, id := range ids {
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: docs[id]}})
	}
	doc.Runs = []sarifRun{run}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode SARIF: %w", err)
	}
	return append(b, '\n'), nil
}

// message is a result's text: what will differ, why, and the fix.
func message(p Prediction) string {
	where := p.Path.String()
	if where == "" {
		where = "fields"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Application %s: %s %s will differ after sync (%s).", p.Application, p.Resource, where, p.Cause)
	if len(p.Evidence) > 0 {
		b.WriteString(" " + strings.TrimSuffix(p.Evidence[0], ".") + ".")
	}
	fmt.Fprintf(&b, " Fix: %s", p.Fix)
	if p.FixFile != "" {
		fmt.Fprintf(&b, " in %s", p.FixFile)
	}
	if p.Reason != "" {
		fmt.Fprintf(&b, " (%s)", p.Reason)
	}
	return b.String()
}
