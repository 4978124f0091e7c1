package ignores

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// maxLocateBytes bounds the repository files searched for a declaration.
const maxLocateBytes = 4 << 20

// found is a rule's declaration in a repository file.
type found struct {
	repo, file, content string
	line                int
}

// locate finds, for each rule, the repository file and line that declare it:
// the document of its holder (the Application, or argocd-cm) in the
// snapshots' repository files, and there the node at the rule's key, whose
// value must be the one the cluster has. A rule declared elsewhere, or
// differently, gets NotInGit.
func locate(snaps []*drift.Snapshot, rules []Rule) {
	for i := range rules {
		r := &rules[i]
		holderVal, ok := holderValue(snaps, r)
		if !ok {
			r.Declared.NotInGit = "its holder is not in the snapshots"
			continue
		}
		hits, differ := search(snaps, r.Declared.Holder, r.at, holderVal)
		switch {
		case len(hits) == 1:
			r.Declared.Repo, r.Declared.File, r.Declared.Line = hits[0].repo, hits[0].file, hits[0].line
			r.content = hits[0].content
		case len(hits) > 1:
			r.Declared.NotInGit = fmt.Sprintf("declared in %d files (%s and %s); cannot tell which one Argo CD applies", len(hits), hits[0].file, hits[1].file)
		case differ != "":
			r.Declared.NotInGit = fmt.Sprintf("%s in the repository files has another value at %s than the cluster", differ, r.Declared.Key)
		default:
			r.Declared.NotInGit = fmt.Sprintf("the %s manifest is not among the repository files", holderWord(r.Declared.Holder))
		}
	}
}

func holderWord(h drift.Ref) string {
	if h.Kind == "Application" {
		return "Application " + h.Name
	}
	return h.Name
}

// holderValue returns what the cluster's holder of the rule has at its key.
func holderValue(snaps []*drift.Snapshot, r *Rule) (any, bool) {
	for _, s := range snaps {
		objs := append([]drift.Object{s.Application}, s.Cluster...)
		for _, o := range objs {
			ref := drift.RefOf(o)
			if ref.Kind == r.Declared.Holder.Kind && ref.Name == r.Declared.Holder.Name && ref.Namespace == r.Declared.Holder.Namespace && ref.Group == r.Declared.Holder.Group {
				if v, ok := r.at.Get(o); ok {
					return v, true
				}
			}
		}
	}
	return nil, false
}

// search looks for the holder's document in every snapshot's repository
// files and returns where the key holds the cluster's value. differ names a
// file whose document has the key with another value.
func search(snaps []*drift.Snapshot, holder drift.Ref, at drift.Pointer, want any) (hits []found, differ string) {
	seen := map[string]bool{}
	for _, s := range snaps {
		names := make([]string, 0, len(s.Repo.Files))
		for f := range s.Repo.Files {
			if strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") {
				names = append(names, f)
			}
		}
		sort.Strings(names)
		for _, f := range names {
			content := s.Repo.Files[f]
			if seen[f+"\x00"+content] || len(content) > maxLocateBytes {
				continue
			}
			seen[f+"\x00"+content] = true
			line, val, ok, err := Find([]byte(content), holder, at)
			if err != nil || !ok {
				continue
			}
			if !drift.Equal(drift.NormalizeNumbers(val), drift.NormalizeNumbers(want)) {
				differ = f
				continue
			}
			hits = append(hits, found{repo: repoURL(s), file: f, line: line, content: content})
		}
	}
	return hits, differ
}

// Find returns the line (1-based) of the node at p in the YAML document of
// src that declares the holder (its kind and name; its namespace when both
// give one), and the node's value. ok is false when no document declares the
// holder or it has nothing at p; err when src is not YAML.
func Find(src []byte, holder drift.Ref, p drift.Pointer) (line int, value any, ok bool, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, nil, false, nil
			}
			return 0, nil, false, fmt.Errorf("read YAML: %w", err)
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
			continue
		}
		root := doc.Content[0]
		if !declares(root, holder) {
			continue
		}
		n := at(root, p)
		if n == nil {
			continue
		}
		var v any
		if err := n.value.Decode(&v); err != nil {
			continue
		}
		return n.line, v, true, nil
	}
}

// declares reports whether a document is the holder's manifest.
func declares(root *yaml.Node, holder drift.Ref) bool {
	kind := scalar(child(root, "kind"))
	md := child(root, "metadata")
	name, ns := scalar(child(md, "name")), scalar(child(md, "namespace"))
	group, _ := drift.SplitAPIVersion(scalar(child(root, "apiVersion")))
	return kind == holder.Kind && name == holder.Name && group == holder.Group &&
		(ns == "" || holder.Namespace == "" || ns == holder.Namespace)
}

// located is the node at a pointer and the line that starts it: a mapping
// key's line, or a list item's first line.
type located struct {
	value *yaml.Node
	line  int
}

func at(n *yaml.Node, p drift.Pointer) *located {
	cur := &located{value: n, line: n.Line}
	for _, tok := range p {
		v := cur.value
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		switch v.Kind {
		case yaml.MappingNode:
			var next *located
			for i := 0; i+1 < len(v.Content); i += 2 {
				if v.Content[i].Value == tok {
					next = &located{value: v.Content[i+1], line: v.Content[i].Line}
				}
			}
			if next == nil {
				return nil
			}
			cur = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v.Content) {
				return nil
			}
			cur = &located{value: v.Content[i], line: v.Content[i].Line}
		default:
			return nil
		}
	}
	return cur
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// date asks the history, for each rule found in Git, which commit added its
// first line, and dates the rule from it.
func date(rules []Rule, opts Options) {
	for i := range rules {
		d := &rules[i].Declared
		if d.File == "" {
			continue
		}
		if opts.Origin == nil {
			d.CommitUnknown = "commit unknown: no repository history was given"
			continue
		}
		o := opts.Origin(d.Repo, d.File, d.Line, rules[i].content)
		if o.Commit == "" {
			d.CommitUnknown = o.Unknown
			if d.CommitUnknown == "" {
				d.CommitUnknown = "commit unknown"
			}
			continue
		}
		d.Commit = o.Commit
		when := o.When.UTC()
		d.Added = &when
		if !opts.Now.IsZero() {
			days := int(opts.Now.Sub(when).Hours() / 24)
			if days < 0 {
				days = 0
			}
			d.AgeDays = &days
		}
	}
}

// repoURL is the repository of the application's first source.
func repoURL(s *drift.Snapshot) string {
	if srcs := drift.Sources(s.Application); len(srcs) > 0 {
		return srcs[0].RepoURL
	}
	return ""
}
