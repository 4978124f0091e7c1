package predict

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/classifiers"
)

// SARIF 2.1.0, the parts predict writes: one run, the tool with one rule per
// cause, one result per drift, and one invocation whose notifications name
// the applications not predicted (and the error of a run that failed).
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
	Notifications  []sarifRule `json:"notifications,omitempty"`
}

// sarifRule is a reportingDescriptor: a rule (a cause) or a notification's kind.
type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          *resultProperties `json:"properties,omitempty"`
}

// resultProperties is a result's property bag: every application and
// resource the drift reaches, the path and the fix.
type resultProperties struct {
	Applications []string `json:"applications"`
	Resources    []string `json:"resources"`
	Path         string   `json:"path"`
	Fix          string   `json:"fix"`
	FixFile      string   `json:"fixFile,omitempty"`
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

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ExitCode                   *int                `json:"exitCode,omitempty"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Descriptor sarifDescriptorRef `json:"descriptor"`
	Level      string             `json:"level"`
	Message    sarifMessage       `json:"message"`
	Locations  []sarifLocation    `json:"locations,omitempty"`
	Properties map[string]string  `json:"properties,omitempty"`
}

type sarifDescriptorRef struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

// The notifications a run may carry, in driver.notifications' order.
const (
	notePredictFailed = "predict-failed"
	noteNotPredicted  = "not-predicted"
	noteStrict        = "strict"
	noteUnlocated     = "unlocated-drift"
)

var sarifNotifications = []sarifRule{
	{ID: notePredictFailed, ShortDescription: sarifMessage{Text: "The prediction did not run to its end: nothing is reported, the message says why."}},
	{ID: noteNotPredicted, ShortDescription: sarifMessage{Text: "An application the change touches was not predicted: the message says why and what would let it be."}},
	{ID: noteStrict, ShortDescription: sarifMessage{Text: "--strict: an application not predicted fails the run."}},
	{ID: noteUnlocated, ShortDescription: sarifMessage{Text: "A predicted drift with no file in the repository to place it at (no manifest of its application is known)."}},
}

// FingerprintKey is the name of the partial fingerprint each result carries.
const FingerprintKey = "driftfixDrift/v1"

// SARIFRun is one predict run as SARIF reports it.
type SARIFRun struct {
	// Result is what Run found; nil when the run failed (Err).
	Result *Result
	// Err is the run's failure: the log then has no result, its invocation
	// executionSuccessful false and one error notification that says it.
	Err error
	// Strict, when set, is why the run fails although it ran to its end
	// (--strict with an application not predicted): an error notification.
	Strict string
	// ExitCode is the process's exit code, written in the invocation when
	// it is not 0.
	ExitCode int
	// Manifests gives each application's defining file (the Application
	// manifest, or the directory predicted as one): the location of a
	// result whose drift has no file, and of a notification.
	Manifests map[string]string
	// Version is the tool's.
	Version string
}

// SARIF writes predictions as a SARIF 2.1.0 log (SARIFLog of a run that
// found them).
func SARIF(ps []Prediction, version string) ([]byte, error) {
	return SARIFLog(SARIFRun{Result: &Result{Predictions: ps}, Version: version})
}

// SARIFLog writes a run as a SARIF 2.1.0 log: ruleId is the cause; one
// result per drift (the same cause at the same resource, path and file,
// reached by several applications, is one result that lists them), located
// at the file (relative to the repository root) and line that declare the
// path, else the file the fix edits, else the application's manifest (line
// 1 when the line is not known; a drift with none of these files is a
// notification, as code scanning refuses a result without a location); a
// partial fingerprint that does not depend on the application, the
// namespace it deploys to or the line; and the applications not predicted,
// and a failure, as the invocation's notifications.
func SARIFLog(in SARIFRun) ([]byte, error) {
	doc := sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0"}
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "driftfix", Version: in.Version, Notifications: sarifNotifications}}, Results: []sarifResult{}}
	inv := sarifInvocation{ExecutionSuccessful: in.Err == nil, ToolExecutionNotifications: []sarifNotification{}}
	if in.ExitCode != 0 {
		code := in.ExitCode
		inv.ExitCode = &code
	}
	if in.Err != nil {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Descriptor: sarifDescriptorRef{ID: notePredictFailed, Index: 0}, Level: "error", Message: sarifMessage{Text: in.Err.Error()}})
	}
	var ps []Prediction
	if in.Result != nil {
		ps = in.Result.Predictions
		for _, np := range in.Result.NotPredicted {
			n := sarifNotification{Descriptor: sarifDescriptorRef{ID: noteNotPredicted, Index: 1}, Level: "warning",
				Message: sarifMessage{Text: notPredictedText(np)}, Properties: map[string]string{"application": np.Application, "kind": np.Kind}}
			if np.Needs != "" {
				n.Properties["needs"] = np.Needs
			}
			file := np.File
			if file == "" {
				file = in.Manifests[np.Application]
			}
			if file != "" {
				n.Locations = []sarifLocation{location(file, 0)}
			}
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
		}
	}
	if in.Strict != "" {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Descriptor: sarifDescriptorRef{ID: noteStrict, Index: 2}, Level: "error", Message: sarifMessage{Text: in.Strict}})
	}
	docs := map[string]string{}
	for _, c := range classifiers.Registry {
		docs[string(c.Name)] = c.Doc
	}
	drifts := groupDrifts(ps, in.Manifests)
	var ids []string
	for _, d := range drifts {
		if _, ok := docs[string(d.first.Cause)]; !ok {
			docs[string(d.first.Cause)] = string(d.first.Cause)
		}
		ids = append(ids, string(d.first.Cause))
	}
	sort.Strings(ids)
	ids = compact(ids)
	index := map[string]int{}
	run.Tool.Driver.Rules = []sarifRule{}
	for i, id := range ids {
		index[id] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: docs[id]}})
	}
	for _, d := range drifts {
		p := d.first
		r := sarifResult{RuleID: string(p.Cause), RuleIndex: index[string(p.Cause)], Level: "warning", Message: sarifMessage{Text: d.message()},
			PartialFingerprints: map[string]string{FingerprintKey: d.fingerprint},
			Properties:          &resultProperties{Applications: d.apps, Resources: d.resources, Path: p.Path.String(), Fix: string(p.Fix), FixFile: p.FixFile}}
		if classifiers.Of(p.Cause).Error {
			r.Level = "error"
		}
		if d.file == "" {
			// Code scanning refuses a whole log for one result without a
			// location: this one is said as a notification instead.
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
				Descriptor: sarifDescriptorRef{ID: noteUnlocated, Index: 3}, Level: r.Level, Message: r.Message})
			continue
		}
		// Line 1 when the line is not known: code scanning places a result
		// by its line.
		r.Locations = []sarifLocation{location(d.file, max(d.line, 1))}
		run.Results = append(run.Results, r)
	}
	run.Invocations = []sarifInvocation{inv}
	doc.Runs = []sarifRun{run}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode SARIF: %w", err)
	}
	return append(b, '\n'), nil
}

// location is a file (a path relative to the repository root, escaped as a
// URI reference) and a line, 0 for the whole file.
func location(file string, line int) sarifLocation {
	loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: (&url.URL{Path: file}).String()}}}
	if line > 0 {
		loc.PhysicalLocation.Region = &sarifRegion{StartLine: line}
	}
	return loc
}

// aDrift is the predictions of one drift: one cause at one resource, path
// and file, in every application it reaches.
type aDrift struct {
	first       Prediction
	file        string
	line        int
	apps        []string
	resources   []string
	fingerprint string
}

// groupDrifts groups predictions by what does not depend on the
// application: the cause, the resource's group, kind and name (not its
// namespace, which is the application's destination), the path and the file
// that declares it. A drift without a file is located at the first of its
// applications' manifests. The order is the predictions'.
func groupDrifts(ps []Prediction, manifests map[string]string) []*aDrift {
	var out []*aDrift
	byKey := map[string]*aDrift{}
	for _, p := range ps {
		file, line := p.File, p.Line
		if file == "" {
			file, line = p.FixFile, 0
		}
		key := strings.Join([]string{string(p.Cause), p.Resource.Group, p.Resource.Kind, p.Resource.Name, p.Path.String(), file}, "\x00")
		if file == "" {
			// No file: one drift per application, at its manifest.
			key += "\x00" + p.Application + "\x00" + p.Resource.Namespace
			file = manifests[p.Application]
		}
		d, ok := byKey[key]
		if !ok {
			sum := sha256.Sum256([]byte(key))
			d = &aDrift{first: p, file: file, line: line, fingerprint: hex.EncodeToString(sum[:16])}
			byKey[key] = d
			out = append(out, d)
		}
		if line > 0 && (d.line == 0 || line < d.line) {
			d.line = line
		}
		d.apps = addOnce(d.apps, p.Application)
		d.resources = addOnce(d.resources, p.Resource.String())
	}
	for _, d := range out {
		sort.Strings(d.apps)
		sort.Strings(d.resources)
	}
	return out
}

func addOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

func compact(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// message is a prediction's text: what will differ, why, and the fix (a
// check's annotation, a SARIF result of one application).
func message(p Prediction) string {
	return messageFor(p, []string{p.Application}, p.Resource.String())
}

// message is a result's text: what will differ, in which applications,
// why, and the fix.
func (d *aDrift) message() string {
	res := d.first.Resource.String()
	if len(d.resources) > 1 {
		r := d.first.Resource
		r.Namespace = ""
		res = fmt.Sprintf("%s (in %d namespaces)", r, len(d.resources))
	}
	return messageFor(d.first, d.apps, res)
}

func messageFor(p Prediction, apps []string, resource string) string {
	where := p.Path.String()
	if where == "" {
		where = "fields"
	}
	var b strings.Builder
	if len(apps) == 1 {
		fmt.Fprintf(&b, "Application %s: %s %s will differ after sync (%s).", apps[0], resource, where, p.Cause)
	} else {
		fmt.Fprintf(&b, "Applications %s: %s %s will differ after sync (%s).", strings.Join(apps, ", "), resource, where, p.Cause)
	}
	if len(p.Evidence) > 0 {
		b.WriteString(" " + strings.TrimSuffix(p.Evidence[0].Text, ".") + ".")
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

// notPredictedText is a notification's text: the application, why, and
// what would let it be predicted.
func notPredictedText(np NotPredicted) string {
	kind := np.Kind
	if kind == "" {
		kind = "Application"
	}
	s := fmt.Sprintf("%s %s was not predicted: %s.", kind, np.Application, strings.TrimSuffix(np.Reason, "."))
	if np.Needs != "" {
		s += " To predict it: " + strings.TrimSuffix(np.Needs, ".") + "."
	}
	return s
}
