package drift

import (
	"encoding/json"
	"fmt"
)

type findingJSON struct {
	Resource    Ref             `json:"resource"`
	Path        string          `json:"path"`
	Cause       Cause           `json:"cause"`
	Git         json.RawMessage `json:"git,omitempty"`
	Live        json.RawMessage `json:"live,omitempty"`
	Evidence    []string        `json:"evidence"`
	Remediation Remediation     `json:"remediation"`
}

type reportJSON struct {
	Application string        `json:"application"`
	SyncStatus  string        `json:"syncStatus"`
	Findings    []findingJSON `json:"findings"`
}

// MarshalJSON writes the report in the diagnosis output format. A finding's
// "git" or "live" is left out when the path does not exist on that side.
func (r *Report) MarshalJSON() ([]byte, error) {
	out := reportJSON{Application: r.Application, SyncStatus: r.SyncStatus, Findings: make([]findingJSON, 0, len(r.Findings))}
	for _, f := range r.Findings {
		fj := findingJSON{Resource: f.Resource, Path: f.Path.String(), Cause: f.Cause, Evidence: f.Evidence, Remediation: f.Remediation}
		if fj.Evidence == nil {
			fj.Evidence = []string{}
		}
		var err error
		if f.InGit {
			if fj.Git, err = json.Marshal(f.Git); err != nil {
				return nil, fmt.Errorf("encode git value of %s %s: %w", f.Resource, f.Path, err)
			}
		}
		if f.InLive {
			if fj.Live, err = json.Marshal(f.Live); err != nil {
				return nil, fmt.Errorf("encode live value of %s %s: %w", f.Resource, f.Path, err)
			}
		}
		out.Findings = append(out.Findings, fj)
	}
	return json.Marshal(out)
}
