package predict

import (
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/utils/diff"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
)

// Suggestion is a prediction's fix as one line of one file changed or
// removed: what a review's suggestion block proposes.
type Suggestion struct {
	File string `json:"file"`
	Line int    `json:"line"` // 1-based, in the revision predicted
	Old  string `json:"old"`
	// New replaces Old; Remove says the line goes (New is then empty).
	New    string `json:"new,omitempty"`
	Remove bool   `json:"remove,omitempty"`
}

// suggestible says a suggestion may carry a fix of kind k for a cause: the
// cause's classifier lists it (Classifier.Suggest), as a fix that writes
// nothing but Git's own value. remove-field deletes Git's line (the HPA's
// replicas, an empty value the API server drops); set-value writes Git's
// value in the form the API server stores, derived from Git's manifest by
// its type, never from a cluster.
func suggestible(k drift.FixKind, cause drift.Cause) bool {
	return slices.Contains(classifiers.Of(cause).Suggest, k)
}

// suggestFixes plans the fixes of the predicted snapshot with the engine
// (remediations, verified by re-diagnosing) and gives each prediction whose
// plan is one line's edit that edit. Planning is the engine's; the
// predictions are not changed otherwise.
func suggestFixes(s *drift.Snapshot, ps []Prediction) {
	want := false
	for _, p := range ps {
		if suggestible(p.Fix, p.Cause) {
			want = true
		}
	}
	if !want {
		return
	}
	// The plans' dates only name ignore rules, which no suggestion carries.
	_, plans, err := pipeline.FixWith(s, remediations.RepoFromSnapshot(s), pipeline.FixOptions{Now: time.Unix(0, 0).UTC()})
	if err != nil {
		return
	}
	custom := map[string]bool{} // group/Kind of the custom resources: their CRD's schema is the cluster's
	for _, o := range s.Cluster {
		if drift.Str(o, "kind") == "CustomResourceDefinition" {
			custom[drift.Str(o, "spec", "group")+"/"+drift.Str(o, "spec", "names", "kind")] = true
		}
	}
	for _, r := range s.Resources {
		if drift.Str(r.Target, "kind") == "CustomResourceDefinition" {
			custom[drift.Str(r.Target, "spec", "group")+"/"+drift.Str(r.Target, "spec", "names", "kind")] = true
		}
	}
	for _, pl := range plans {
		if pl.Dropped != "" || len(pl.Edits) != 1 {
			continue
		}
		if pl.Kind == drift.FixSetValue && custom[pl.Resource.GroupKind()] {
			continue // a value a CRD's schema stores is not Git's alone
		}
		sg, ok := oneLine(pl.Edits[0])
		if !ok {
			continue
		}
		// Plans that edit one file are made one after the other: this
		// plan's edit starts from the file as the plans before it left it.
		// Its line is placed in the repository's own file.
		if orig, ok := s.Repo.Files[sg.File]; !ok {
			continue
		} else if orig != string(pl.Edits[0].Before) {
			if sg.Line = sameLine(orig, string(pl.Edits[0].Before), sg.Line); sg.Line == 0 {
				continue
			}
		}
		for _, f := range pl.Findings {
			if !suggestible(pl.Kind, f.Cause) {
				continue
			}
			key := drift.FindingKey(f)
			for i := range ps {
				if ps[i].key == key && ps[i].Cause == f.Cause && ps[i].Fix == pl.Kind && ps[i].Suggestion == nil {
					c := sg
					ps[i].Suggestion = &c
				}
			}
		}
	}
}

// oneLine reads an edit as one line changed or removed; false when it is
// more (or the changed line is another key's: a set-value keeps the key).
func oneLine(e remediations.Edit) (Suggestion, bool) {
	before := strings.Split(string(e.Before), "\n")
	after := strings.Split(string(e.After), "\n")
	pre := 0
	for pre < len(before) && pre < len(after) && before[pre] == after[pre] {
		pre++
	}
	suf := 0
	for suf < len(before)-pre && suf < len(after)-pre && before[len(before)-1-suf] == after[len(after)-1-suf] {
		suf++
	}
	old := before[pre : len(before)-suf]
	neu := after[pre : len(after)-suf]
	if len(old) != 1 {
		return Suggestion{}, false
	}
	sg := Suggestion{File: e.File, Line: pre + 1, Old: old[0]}
	switch len(neu) {
	case 0:
		sg.Remove = true
	case 1:
		ok, nk := yamlKey(old[0]), yamlKey(neu[0])
		if ok == "" || ok != nk {
			return Suggestion{}, false
		}
		sg.New = neu[0]
	default:
		return Suggestion{}, false
	}
	return sg, true
}

// sameLine is the line of from (1-based) that line l of to is, where the
// two texts have it in common; 0 when to changed it.
func sameLine(from, to string, l int) int {
	f, t := 1, 1
	for _, d := range diff.Do(from, to) {
		n := lines(d.Text)
		switch d.Type { // diffmatchpatch's operations: -1 delete, 0 equal, 1 insert
		case 0:
			if l >= t && l < t+n {
				return f + (l - t)
			}
			f, t = f+n, t+n
		case 1:
			t += n
		case -1:
			f += n
		}
	}
	return 0
}

// yamlKey is a YAML line's key with its indentation ("  cpu" of
// "  cpu: 1000m"), "" when the line has none.
func yamlKey(line string) string {
	k, _, ok := strings.Cut(line, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return ""
	}
	return k
}
