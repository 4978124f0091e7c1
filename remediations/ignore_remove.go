package remediations

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// RemoveAppIgnoreRules removes items of spec.ignoreDifferences from the
// Application manifest named app in file, in place, keeping every other line
// and comment. want holds, by index, the rule the cluster's Application has
// there: an item that is not that rule is refused, since the manifest and
// the cluster disagree. A list left empty is removed with its key.
func RemoveAppIgnoreRules(file string, src []byte, app string, want map[int]any) ([]byte, error) {
	doc, err := yamledit.FindDocument(src, "Application", app)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if doc < 0 {
		return nil, fmt.Errorf("%s declares no Application %s", file, app)
	}
	docs, _ := yamledit.Documents(src)
	idx := make([]int, 0, len(want))
	for i, rule := range want {
		at := drift.Pointer{"spec", "ignoreDifferences", strconv.Itoa(i)}
		have, ok := at.Get(docs[doc])
		if !ok || !drift.Equal(drift.NormalizeNumbers(have), drift.NormalizeNumbers(rule)) {
			return nil, fmt.Errorf("%s: spec.ignoreDifferences[%d] of Application %s is not the rule the cluster has; the manifest and the cluster disagree", file, i, app)
		}
		idx = append(idx, i)
	}
	// the last first, so the indexes left stay where they were
	slices.Sort(idx)
	slices.Reverse(idx)
	out := src
	for _, i := range idx {
		if out, err = yamledit.Remove(out, doc, drift.Pointer{"spec", "ignoreDifferences", strconv.Itoa(i)}); err != nil {
			return nil, fmt.Errorf("edit %s: %w", file, err)
		}
	}
	return out, nil
}

// RemoveArgoCDCMKeys removes argocd-cm keys from the file that declares
// argocd-cm, in place, whichever way it declares it: the data key of a
// manifest or strategic-merge patch, the JSON 6902 operation that adds the
// key, or the key of configs.cm in Helm values. A key the file does not
// declare is refused: argocd-cm is then declared elsewhere too.
func RemoveArgoCDCMKeys(file string, src []byte, keys []string) ([]byte, CMStyle, error) {
	style, doc, err := DetectCMStyle(file, src)
	if err != nil {
		return nil, "", err
	}
	docs, _ := yamledit.Documents(src)
	var at []drift.Pointer
	for _, k := range keys {
		var p drift.Pointer
		switch style {
		case StyleManifest:
			p = drift.Pointer{"data", k}
		case StyleHelm:
			p = drift.Pointer{"configs", "cm", k}
		case StyleJSONPatch:
			for i, op := range docs[0].([]any) {
				if drift.Str(drift.Map(op), "path") == "/data/"+drift.EscapeToken(k) {
					if o := drift.Str(drift.Map(op), "op"); o != "add" && o != "replace" {
						return nil, style, fmt.Errorf("%s: operation %d on %s is %q, not add or replace", file, i, k, o)
					}
					p = drift.Pointer{strconv.Itoa(i)}
				}
			}
		}
		if _, ok := p.Get(docs[doc]); p == nil || !ok {
			return nil, style, fmt.Errorf("%s does not declare argocd-cm's key %s; it is declared elsewhere", file, k)
		}
		at = append(at, p)
	}
	// JSON 6902 operations are removed the last first, so the indexes left
	// stay where they were.
	slices.SortFunc(at, func(a, b drift.Pointer) int {
		if len(a) == 1 && len(b) == 1 {
			x, _ := strconv.Atoi(a[0])
			y, _ := strconv.Atoi(b[0])
			return y - x
		}
		return 0
	})
	out := src
	for _, p := range at {
		if out, err = yamledit.Remove(out, doc, p); err != nil {
			return nil, style, fmt.Errorf("edit %s: %w", file, err)
		}
	}
	return out, style, nil
}
