package diff

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

const annCompareOptions = "argocd.argoproj.io/compare-options"

// serverSideDiff reports whether Argo CD 3.6 compares the application with
// Server-Side Diff: its compare-options annotation says ServerSideDiff=true,
// or its sync options say ServerSideApply=true, unless the annotation says
// ServerSideDiff=false. It is the application's choice alone: a resource that
// asks for ServerSideApply=true in its own sync-options annotation is still
// compared client-side (the controller gives no dry-run applier then), and one
// that opts out is compared server-side all the same.
func serverSideDiff(app drift.Object) bool {
	opts := drift.Annotations(app)[annCompareOptions]
	if hasOption(opts, "ServerSideDiff=false") {
		return false
	}
	return hasOption(opts, "ServerSideDiff=true") || hasSyncOption(drift.List(app, "spec", "syncPolicy", "syncOptions"), syncOptServerSide)
}

// includeMutationWebhook reports whether the application's compare-options
// annotation asks Argo CD to keep what mutating webhooks wrote into the
// dry-run answer.
func includeMutationWebhook(app drift.Object) bool {
	return hasOption(drift.Annotations(app)[annCompareOptions], "IncludeMutationWebhook=true")
}

func hasOption(list, opt string) bool {
	for _, o := range strings.Split(list, ",") {
		if strings.TrimSpace(o) == opt {
			return true
		}
	}
	return false
}

// predictedFromDryRun returns what Server-Side Diff compares the live object
// with: the API server's answer to a dry-run apply of Git's manifest. Unless
// mutation webhooks are included, only what argocd-controller owns in the
// answer is taken from it, over the live object (whatever a webhook or the
// server wrote beside is live's), and a field the apply removed counts only
// where argocd-controller owned it live. The answer must record
// argocd-controller's fields then, else Argo CD fails the comparison.
func predictedFromDryRun(dry, live drift.Object, withWebhooks bool) (drift.Object, error) {
	if withWebhooks {
		return drift.DeepCopy(dry).(map[string]any), nil
	}
	entries, _ := parseManagedFields(dry)
	var sets []*FieldSet
	for _, e := range entries {
		if e.owner.Manager == argoSSAManager {
			sets = append(sets, e.set)
		}
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("the API server's dry-run answer for %s records no field of %s, which Argo CD needs to leave out what mutating webhooks wrote (ComparisonError)", drift.RefOf(dry), argoSSAManager)
	}
	var liveSets []*FieldSet
	liveEntries, _ := parseManagedFields(live)
	for _, e := range liveEntries {
		if e.owner.Manager == argoSSAManager {
			liveSets = append(liveSets, e.set)
		}
	}
	out := drift.DeepCopy(live).(map[string]any)
	res := any(out)
	takeOwned(dry, &res, dry, sets, nil)
	dropRemoved(live, dry, &res, live, liveSets, nil)
	return res.(map[string]any), nil
}

// ownedBy reports whether one of the sets owns p in doc, or something beneath
// it, as a server-side apply's field set does: a node recorded whole owns the
// values beneath it only where they are one atomic value (a list or scalar),
// not a map's keys, which a field set lists one by one.
func ownedBy(sets []*FieldSet, doc any, p drift.Pointer) bool {
	for _, s := range sets {
		if s.ownsForApply(doc, p) {
			return true
		}
	}
	return false
}

func (f *FieldSet) ownsForApply(doc any, p drift.Pointer) bool {
	return f.walk(doc, p, func(val any) bool {
		_, isMap := val.(map[string]any)
		return !isMap
	})
}

// takeOwned writes into *out every value of the dry-run answer at d (path p)
// that argocd-controller owns there, matching list items by their key.
func takeOwned(d any, out *any, dry drift.Object, sets []*FieldSet, p drift.Pointer) {
	if !ownedBy(sets, dry, p) {
		return
	}
	switch dv := d.(type) {
	case map[string]any:
		om, ok := (*out).(map[string]any)
		if !ok || len(dv) == 0 {
			*out = drift.DeepCopy(d)
			return
		}
		for k, v := range dv {
			cp := p.Child(k)
			if !ownedBy(sets, dry, cp) {
				continue
			}
			cur, has := om[k]
			if !has {
				cur = nil
			}
			takeOwned(v, &cur, dry, sets, cp)
			om[k] = cur
		}
	case []any:
		ol, ok := (*out).([]any)
		if !ok || len(dv) == 0 {
			*out = drift.DeepCopy(d)
			return
		}
		for i, it := range dv {
			cp := p.Index(i)
			if !ownedBy(sets, dry, cp) {
				continue
			}
			j := matchItem(ol, it, i)
			if j < 0 {
				ol = append(ol, drift.DeepCopy(it))
				continue
			}
			cur := ol[j]
			takeOwned(it, &cur, dry, sets, cp)
			ol[j] = cur
		}
		*out = ol
	default:
		*out = d
	}
}

// dropRemoved removes from *out what live has at l (path p) and the dry-run
// answer d does not, where argocd-controller owned it (or something beneath)
// live: the apply removed it.
func dropRemoved(l, d any, out *any, live drift.Object, liveSets []*FieldSet, p drift.Pointer) {
	switch lv := l.(type) {
	case map[string]any:
		dm, _ := d.(map[string]any)
		om, ok := (*out).(map[string]any)
		if !ok {
			return
		}
		for k, v := range lv {
			cp := p.Child(k)
			dvk, inDry := dm[k]
			if !inDry {
				if ownedBy(liveSets, live, cp) {
					delete(om, k)
				}
				continue
			}
			if cur, has := om[k]; has {
				dropRemoved(v, dvk, &cur, live, liveSets, cp)
				om[k] = cur
			}
		}
	case []any:
		dl, _ := d.([]any)
		ol, ok := (*out).([]any)
		if !ok {
			return
		}
		var keep []any
		for i, it := range lv {
			cp := p.Index(i)
			j := matchItem(dl, it, i)
			oj := matchItem(ol, it, i)
			if oj < 0 {
				continue
			}
			if j < 0 {
				if ownedBy(liveSets, live, cp) {
					ol[oj] = dropped{}
				}
				continue
			}
			cur := ol[oj]
			dropRemoved(it, dl[j], &cur, live, liveSets, cp)
			ol[oj] = cur
		}
		for _, it := range ol {
			if _, gone := it.(dropped); !gone {
				keep = append(keep, it)
			}
		}
		if len(keep) != len(ol) {
			if keep == nil {
				keep = []any{}
			}
			*out = keep
		}
	}
}

type dropped struct{}

// matchItem finds item's counterpart in list: the item with the same name
// key (name, key, id, port, containerPort) when item has one, else the item
// at the same index.
func matchItem(list []any, item any, index int) int {
	if m, ok := item.(map[string]any); ok {
		for _, k := range []string{"name", "key", "id", "containerPort", "port", "ip"} {
			kv, has := m[k]
			if !has {
				continue
			}
			for j, o := range list {
				if om, ok := o.(map[string]any); ok && drift.Equal(om[k], kv) {
					return j
				}
			}
			return -1
		}
	}
	if index < len(list) {
		if _, gone := list[index].(dropped); !gone {
			return index
		}
	}
	return -1
}
