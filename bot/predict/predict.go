// Package predict says, from Git alone, which fields of an Argo CD
// application will stay OutOfSync after the next sync, with the cause and the
// fix of each: `driftfix predict` on a pull request, before the drift is live.
//
// It writes no second diff or classifier. From a render of the application
// (Helm, Kustomize or a plain directory, rendered by remediations/render as
// Argo CD's repo-server renders it) it builds the snapshot the diagnosis
// would see after a sync, with the live side predicted by what Kubernetes
// does to Git's manifest:
//
//   - the API server's stored form of each built-in object (bot/diff's
//     StoredObject: Git's manifest decoded into its type and encoded again)
//     and, for a custom resource, its CRD's pruning and defaults;
//   - spec.replicas taken by the HorizontalPodAutoscaler that targets the
//     workload (in the render or the cluster context);
//   - a second, independent render of the same revision (the live side is
//     one render, the desired state the other);
//   - the PersistentVolumeClaims a StatefulSet's volumeClaimTemplates create
//     with the label Argo CD tracks by;
//
// then diagnoses it with the engine (bot/pipeline: bot/diff, classifiers,
// remediations), so a difference is predicted only where Argo CD would
// report it. The mutating webhooks of the cluster context that will admit an
// object are matched by the API server's own rules (classifiers.Admitting);
// what a webhook writes is not known before it runs, so that prediction names
// the resource and the webhook, not a path. Ignore rules are judged by the
// broad-ignore classifier as a diagnosis judges them.
//
// Predict does no I/O; Changes keeps what a change introduces.
package predict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/classifiers"
)

// Input is one application at one revision, as Git alone gives it.
type Input struct {
	// Application is the argoproj.io Application manifest.
	Application drift.Object
	// Targets is the application's render at the revision (its desired
	// manifests, as the repo-server renders them, without Argo CD's
	// tracking metadata).
	Targets []drift.Object
	// Renders are further independent renders of the same revision and
	// inputs (a second Helm render, for random or time-based values).
	Renders [][]drift.Object
	// Cluster is the cluster context: live objects a diagnosis consults
	// (HPAs, MutatingWebhookConfigurations, Namespaces, CRDs, argocd-cm), as
	// a snapshot's cluster.
	Cluster []drift.Object
	// Repo is the repository at the revision (path -> content), for the
	// file and line of each prediction.
	Repo map[string]string
	// Manifest is the file in Repo that holds the Application, when it is
	// there.
	Manifest string
}

// Prediction is one field that will differ after sync.
type Prediction struct {
	Application string `json:"application"`
	// File and Line are where the repository declares the path (a
	// manifest, a template or a values file); Line is 0 when not found.
	File     string        `json:"file,omitempty"`
	Line     int           `json:"line,omitempty"`
	Resource drift.Ref     `json:"resource"`
	Path     drift.Pointer `json:"path"`
	Cause    drift.Cause   `json:"cause"`
	Fix      drift.FixKind `json:"fix"`
	// FixFile is the file the fix edits, when located; Reason why there is
	// no fix (Fix none).
	FixFile  string           `json:"fixFile,omitempty"`
	Reason   string           `json:"reason,omitempty"`
	Git      any              `json:"git,omitempty"`
	Evidence []drift.Evidence `json:"evidence,omitempty"`
	// Suggestion is the fix as one line's edit, when the engine's verified
	// plan for the prediction is one (Options.Suggest).
	Suggestion *Suggestion `json:"suggestion,omitempty"`

	key string // drift.FindingKey of the finding, with the cause
}

// Key identifies a prediction across two revisions of one application: the
// application, the resource and path (an Application's own ignore rule by
// what it says) and the cause.
func (p Prediction) Key() string { return p.Application + "\x00" + p.key + "\x00" + string(p.Cause) }

// Predict returns every field of the application that will differ after a
// sync of the revision in, sorted. It does no I/O.
func Predict(in Input) ([]Prediction, error) {
	return predict(in, false)
}

// predict is Predict, with each prediction's one-line fix when suggest is set.
func predict(in Input, suggest bool) ([]Prediction, error) {
	s, err := Snapshot(in)
	if err != nil {
		return nil, err
	}
	rep, err := pipeline.Diagnose(s, drift.Sensitivity{})
	if err != nil {
		return nil, err
	}
	app := s.AppName()
	var out []Prediction
	for _, f := range rep.Findings {
		// A prediction names only what Git alone decides (the cause's
		// Classifier.Predicted): a simulated live state that yields
		// another cause is not reported.
		if !classifiers.Of(f.Cause).Predicted {
			continue
		}
		p := Prediction{Application: app, Resource: f.Resource, Path: f.Path, Cause: f.Cause,
			Fix: f.Remediation.Kind, FixFile: f.Remediation.File, Reason: f.Remediation.Reason,
			Evidence: f.Evidence, key: drift.FindingKey(f)}
		if f.InGit {
			p.Git = f.Git
		}
		if f.Cause == drift.CauseHPAReplicas {
			p.Evidence = hpaEvidence(f)
		}
		out = append(out, p)
	}
	out = append(out, admissions(s)...)
	for i := range out {
		out[i].File, out[i].Line = locate(s, in.Manifest, out[i])
		if r := out[i].Resource; r.Group == "" && r.Kind == "ConfigMap" && r.Name == "argocd-cm" && out[i].File != "" {
			out[i].FixFile = out[i].File // a system rule is edited where the repository declares it
		}
	}
	if suggest {
		suggestFixes(s, out)
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out, nil
}

func less(a, b Prediction) bool {
	if a.Application != b.Application {
		return a.Application < b.Application
	}
	if a.Resource != b.Resource {
		return a.Resource.Less(b.Resource)
	}
	if as, bs := a.Path.String(), b.Path.String(); as != bs {
		return as < bs
	}
	return a.Cause < b.Cause
}

// admissions predicts, for each object a mutating webhook of the cluster
// context will admit, that the webhook's writes will differ from Git. The
// engine classifies a webhook's write once it is in the live object; before,
// only the match is known.
func admissions(s *drift.Snapshot) []Prediction {
	settings, _, err := diff.ReadSettings(s.Cluster)
	if err != nil {
		return nil
	}
	in := classifiers.NewInput(s, settings, &drift.Comparison{})
	var out []Prediction
	for i := range s.Resources {
		res := &s.Resources[i]
		if res.Target == nil {
			continue
		}
		ms := in.Admitting(res)
		if len(ms) == 0 {
			continue
		}
		ev := append([]drift.Evidence{}, ms[0].Evidence...)
		if len(ms) > 1 {
			ev = append(ev, drift.Say(drift.EvidenceWebhook, fmt.Sprintf("%d other mutating webhooks also admit this object", len(ms)-1)))
		}
		ev = append(ev, drift.Say(drift.EvidenceConsequence, "what the webhook writes is known once it has run: a server-side dry run of the manifest shows the fields it adds or changes, which Argo CD will then report as differing"))
		ref := res.Ref()
		out = append(out, Prediction{Application: s.AppName(), Resource: ref, Path: drift.Pointer{}, Cause: drift.CauseWebhookMutation,
			Fix: drift.FixNone, Reason: fmt.Sprintf("the fields webhook %s (MutatingWebhookConfiguration %s) writes are not known before it runs; once diagnosed, a field it legitimately owns gets a scoped ignoreDifferences entry", ms[0].Webhook, ms[0].Config),
			Evidence: ev, key: ref.String() + "\x00webhook\x00" + ms[0].Config + "/" + ms[0].Webhook})
	}
	return out
}

// Changes returns the predictions of head that base does not have: what a
// change introduces.
func Changes(base, head []Prediction) []Prediction {
	had := map[string]bool{}
	for _, p := range base {
		had[p.Key()] = true
	}
	var out []Prediction
	for _, p := range head {
		if !had[p.Key()] {
			out = append(out, p)
		}
	}
	return out
}

// String is one line: resource, path, cause.
func (p Prediction) String() string {
	path := p.Path.String()
	if path == "" {
		path = "(object)"
	}
	return strings.Join([]string{p.Resource.String(), path, string(p.Cause)}, " ")
}

// hpaEvidence replaces, in an hpa-replicas finding's evidence, what Git
// declares against the live replica count (which predict chose itself)
// with what the HPA will do.
func hpaEvidence(f drift.Finding) []drift.Evidence {
	var out []drift.Evidence
	for _, e := range f.Evidence {
		if e.Kind == drift.EvidenceGit && f.InGit {
			e.Text = fmt.Sprintf("Git declares replicas: %s; after the sync the HPA sets its own count through the scale subresource, and Argo CD reports the difference", drift.Brief(f.Git, 60))
		}
		out = append(out, e)
	}
	return out
}
