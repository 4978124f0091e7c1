package remediations

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// A vendored file is a copy of an upstream manifest that the repository
// writes again from upstream: an edit there is lost at the next update, so
// driftfix never edits one. The rule, in this order:
//
//  1. a directory of the file's path is named vendor, vendored, upstream,
//     third_party or third-party (the usual homes of such copies); or
//  2. a Makefile (Makefile, GNUmakefile, *.mk) or shell script (*.sh) of
//     the repository names the file's path, from the repository root or
//     from the script's own directory: the target that regenerates it.
//
// A field a vendored copy sets is changed in the repository's own
// Kustomize patch of the resource instead (the last one that applies and
// is not vendored itself): a value is written there, a field to remove is
// set to null, which a strategic merge patch deletes. Without such a patch,
// the plan is dropped and says so.

var vendorDirs = map[string]bool{"vendor": true, "vendored": true, "upstream": true, "third_party": true, "third-party": true}

// vendoredBy says why a repository file is a vendored copy, or "".
func vendoredBy(repo Repo, file string) string {
	dirs := strings.Split(path.Dir(file), "/")
	for i, d := range dirs {
		if vendorDirs[d] {
			return fmt.Sprintf("it is under %s/, a directory of copies of upstream files", strings.Join(dirs[:i+1], "/"))
		}
	}
	for _, f := range sortedFiles(repo) {
		base := path.Base(f)
		if base != "Makefile" && base != "GNUmakefile" && !strings.HasSuffix(base, ".mk") && !strings.HasSuffix(base, ".sh") {
			continue
		}
		text := string(repo[f])
		rel := file
		if d := path.Dir(f); d != "." {
			if !strings.HasPrefix(file, d+"/") {
				if mentions(text, file) {
					return fmt.Sprintf("%s writes it", f)
				}
				continue
			}
			rel = strings.TrimPrefix(file, d+"/")
		}
		if mentions(text, rel) || mentions(text, file) {
			return fmt.Sprintf("%s writes it", f)
		}
	}
	return ""
}

// mentions reports whether text names the path p as a whole word (not as
// part of a longer path).
func mentions(text, p string) bool {
	re := regexp.MustCompile(`(^|[\s"'=>(:]|\./)` + regexp.QuoteMeta(p) + `($|[\s"';)])`)
	return re.MatchString(text)
}

// ownPatchEdit replaces edits of vendored copies that set a field of a
// Kustomize-built resource by one edit of the repository's own patch of
// it. locs are the documents that set the field (the ones to edit), paths
// the field's path in each. It returns nil steps and "" when no vendored
// copy is among locs, and why nothing can be edited when one is and no
// patch of the repository's own can take the change.
func (c *Context) ownPatchEdit(ref drift.Ref, target drift.Object, f drift.Finding, locs []located, remove bool) (file string, step func([]byte) ([]byte, error), keep []int, note, why string) {
	vendored, vendoredFile, reason := "", "", ""
	for i, l := range locs {
		if v := vendoredBy(c.Repo, l.file); v != "" {
			if vendored == "" {
				vendored, vendoredFile, reason = fmt.Sprintf("%s (%s)", l.file, v), l.file, v
			}
			continue
		}
		keep = append(keep, i)
	}
	if vendored == "" {
		return "", nil, nil, "", ""
	}
	var own *kustomizeSite
	for _, src := range drift.Sources(c.Snapshot.Application) {
		if kustomizationFile(c.Repo, src.Path) == "" {
			continue
		}
		sites, err := kustomizeSites(c.Repo, src.Path, ref, "", "", 0)
		if err != nil {
			continue
		}
		for i := len(sites) - 1; i >= 0; i-- {
			if sites[i].patch && vendoredBy(c.Repo, sites[i].file) == "" {
				own = &sites[i]
				break
			}
		}
		if own != nil {
			break
		}
	}
	if own == nil {
		return "", nil, nil, "", fmt.Sprintf("%s is set by %s, a vendored copy that its update overwrites, and the repository has no Kustomize patch of its own for %s: add one that sets it (driftfix never edits a vendored copy)", f.GitPath, vendored, ref)
	}
	doc, err := yamlDoc(c.Repo[own.file], own.doc)
	if err != nil {
		return "", nil, nil, "", fmt.Sprintf("read the patch %s: %v", own.file, err)
	}
	p, ok := patchPath(target, doc, f.GitPath)
	if !ok {
		return "", nil, nil, "", fmt.Sprintf("%s is set by %s, a vendored copy that its update overwrites; the repository's patch %s cannot take %s (a list item it does not name), so change it there by hand", f.GitPath, vendored, own.file, f.GitPath)
	}
	var value any // null: a strategic merge patch deletes the field
	if !remove {
		value = f.Live
	}
	// The own patch replaces the edits of every document that sets the
	// field but itself.
	var rest []int
	for _, i := range keep {
		if locs[i] != own.located {
			rest = append(rest, i)
		}
	}
	loc := own.located
	note = fmt.Sprintf("%s is not edited: it is a vendored copy, %s; the repository's own patch %s takes the change", vendoredFile, reason, own.file)
	return own.file, func(b []byte) ([]byte, error) { return yamledit.SetValue(b, loc.doc, p, value) }, rest, note, ""
}

// patchPath maps a path of the rendered target into a patch document that
// may lack its last fields: list items are matched by name (a patch names
// the items it changes), missing fields below are map keys only.
func patchPath(target, doc any, gp drift.Pointer) (drift.Pointer, bool) {
	out := make(drift.Pointer, 0, len(gp))
	t, d := target, doc
	for k, tok := range gp {
		if tl, isList := t.([]any); isList {
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(tl) {
				return nil, false
			}
			dl, ok := d.([]any)
			if !ok {
				return nil, false
			}
			name, hasName := drift.Map(tl[i])["name"].(string)
			if !hasName {
				return nil, false
			}
			j := -1
			for n, item := range dl {
				if s, _ := drift.Map(item)["name"].(string); s == name {
					j = n
				}
			}
			if j < 0 {
				return nil, false
			}
			out = append(out, strconv.Itoa(j))
			t, d = tl[i], dl[j]
			continue
		}
		tm, _ := t.(map[string]any)
		dm, ok := d.(map[string]any)
		if !ok {
			return nil, false
		}
		out = append(out, tok)
		t = tm[tok]
		next, present := dm[tok]
		if !present {
			// the rest is created: map keys only
			for _, rest := range gp[k+1:] {
				if _, err := strconv.Atoi(rest); err == nil {
					return nil, false
				}
			}
			return append(out, gp[k+1:]...), true
		}
		d = next
	}
	return out, true
}
