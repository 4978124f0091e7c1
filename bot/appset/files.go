package appset

import (
	"path"
	"sort"
	"strconv"
	"strings"
)

// cleanTree keys a repository's files by their path from its root, as Git
// lists them: no leading ./ or /, no doubled slashes.
func cleanTree(tree map[string]string) map[string]string {
	out := make(map[string]string, len(tree))
	for k, v := range tree {
		c := path.Clean("/" + k)[1:]
		if c == "" {
			continue
		}
		out[c] = v
	}
	return out
}

// directories lists a checkout's directories as Argo CD's repo server walks
// them: depth first, each directory's entries by name, hidden directories
// (and all beneath them) left out, the root left out. Git keeps no empty
// directory, so every directory holds a file somewhere beneath it.
func directories(tree map[string]string) []string {
	children := map[string]map[string]bool{}
	for f := range tree {
		parts := strings.Split(f, "/")
		for i := 0; i < len(parts)-1; i++ {
			parent := strings.Join(parts[:i], "/")
			if children[parent] == nil {
				children[parent] = map[string]bool{}
			}
			children[parent][parts[i]] = true
		}
	}
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		names := sortedKeys(children[dir])
		for _, n := range names {
			if strings.HasPrefix(n, ".") {
				continue
			}
			p := n
			if dir != "" {
				p = dir + "/" + n
			}
			out = append(out, p)
			walk(p)
		}
	}
	walk("")
	return out
}

// filterPaths keeps the paths a directories list includes and none of its
// exclude items matches, each item matched with path.Match; an item that is
// not a valid pattern matches nothing, as in Argo CD.
func filterPaths(items []pathPattern, paths []string) []string {
	var out []string
	for _, p := range paths {
		in, ex := false, false
		for _, it := range items {
			m, err := path.Match(it.path, p)
			if err != nil || !m {
				continue
			}
			if it.exclude {
				ex = true
			} else {
				in = true
			}
		}
		if in && !ex {
			out = append(out, p)
		}
	}
	return out
}

// lsFiles lists the files `git ls-files -- PATTERN` lists at the root of a
// checkout, which is how Argo CD's repo server finds a files generator's
// files: the pattern is a Git pathspec, matching a file or directory by
// name, or as a wildcard pattern in which * and ? match / as well.
func lsFiles(tree map[string]string, pattern string) []string {
	pat, ok := normalizePathspec(pattern)
	if !ok {
		return nil
	}
	var out []string
	for f := range tree {
		if pathspecMatch(pat, f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// normalizePathspec resolves . and .. in a pathspec and drops doubled
// slashes, as Git does before matching; false when it leaves the repository.
func normalizePathspec(p string) (string, bool) {
	trailing := strings.HasSuffix(p, "/")
	var parts []string
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(parts) == 0 {
				return "", false
			}
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, s)
		}
	}
	out := strings.Join(parts, "/")
	if trailing && out != "" {
		out += "/"
	}
	if strings.HasPrefix(p, "/") {
		return "", false // an absolute path is outside the repository
	}
	return out, true
}

func pathspecMatch(pat, name string) bool {
	if pat == "" {
		return true
	}
	// The whole pathspec taken literally: the file, or a directory above it.
	if strings.HasPrefix(name, pat) {
		if len(name) == len(pat) || strings.HasSuffix(pat, "/") || name[len(pat)] == '/' {
			return true
		}
	}
	if !strings.ContainsAny(pat, "*?[\\") {
		return false
	}
	return wildmatch(pat, name)
}

// wildmatch is Git's wildmatch without WM_PATHNAME: * and ? match any
// character including /, [...] a class (! or ^ negates, ranges, [:name:]),
// \ escapes.
func wildmatch(p, t string) bool {
	return wm(p, t) == wmMatch
}

const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
)

func wm(p, t string) int {
	for len(p) > 0 {
		c := p[0]
		if c != '*' && len(t) == 0 {
			return wmAbortAll
		}
		switch c {
		case '\\':
			if len(p) < 2 {
				return wmAbortAll
			}
			if t[0] != p[1] {
				return wmNoMatch
			}
			p, t = p[2:], t[1:]
		case '?':
			p, t = p[1:], t[1:]
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if len(p) == 0 {
				return wmMatch
			}
			for {
				r := wm(p, t)
				if r != wmNoMatch {
					return r
				}
				if len(t) == 0 {
					return wmAbortAll
				}
				t = t[1:]
			}
		case '[':
			n, ok, end := matchClass(p, t[0])
			if end {
				return wmAbortAll
			}
			if !ok {
				return wmNoMatch
			}
			p, t = p[n:], t[1:]
		default:
			if t[0] != c {
				return wmNoMatch
			}
			p, t = p[1:], t[1:]
		}
	}
	if len(t) == 0 {
		return wmMatch
	}
	return wmNoMatch
}

var classes = map[string]func(byte) bool{
	"alnum":  func(b byte) bool { return isAlpha(b) || isDigit(b) },
	"alpha":  isAlpha,
	"blank":  func(b byte) bool { return b == ' ' || b == '\t' },
	"cntrl":  func(b byte) bool { return b < 32 || b == 127 },
	"digit":  isDigit,
	"graph":  func(b byte) bool { return b > 32 && b < 127 },
	"lower":  func(b byte) bool { return b >= 'a' && b <= 'z' },
	"print":  func(b byte) bool { return b >= 32 && b < 127 },
	"punct":  func(b byte) bool { return b > 32 && b < 127 && !isAlpha(b) && !isDigit(b) },
	"space":  func(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') },
	"upper":  func(b byte) bool { return b >= 'A' && b <= 'Z' },
	"xdigit": func(b byte) bool { return isDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F') },
}

func isAlpha(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }
func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// matchClass matches one character against the class p starts with; it
// returns the class's length, whether it matched, and whether the class is
// unterminated (which ends all matching, as in Git).
func matchClass(p string, ch byte) (int, bool, bool) {
	i := 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	matched := false
	first := true
	var prev byte
	for {
		if i >= len(p) {
			return 0, false, true
		}
		c := p[i]
		if c == ']' && !first {
			break
		}
		first = false
		switch {
		case c == '\\':
			i++
			if i >= len(p) {
				return 0, false, true
			}
			c = p[i]
			if c == ch {
				matched = true
			}
			prev = c
		case c == '-' && prev != 0 && i+1 < len(p) && p[i+1] != ']':
			i++
			hi := p[i]
			if hi == '\\' {
				i++
				if i >= len(p) {
					return 0, false, true
				}
				hi = p[i]
			}
			if ch >= prev && ch <= hi {
				matched = true
			}
			prev = 0
		case c == '[' && i+1 < len(p) && p[i+1] == ':':
			j := strings.Index(p[i+2:], ":]")
			if j < 0 {
				if c == ch {
					matched = true
				}
				prev = c
				break
			}
			name := p[i+2 : i+2+j]
			f, ok := classes[name]
			if !ok {
				return 0, false, true
			}
			if f(ch) {
				matched = true
			}
			i += 2 + j + 1
			prev = 0
		default:
			if c == ch {
				matched = true
			}
			prev = c
		}
		i++
	}
	return i + 1, matched != negate, false
}

// pathParams are a directory's or file's path parameters: path,
// path.basename, path.basenameNormalized, path[N] (or path.segments with
// goTemplate), and for a file path.filename and path.filenameNormalized,
// under pathParamPrefix when set.
func pathParams(p, prefix string, goTemplate, file bool) map[string]any {
	dir := p
	if file {
		dir = path.Dir(p)
	}
	if goTemplate {
		pm := map[string]any{
			"path":               dir,
			"basename":           path.Base(dir),
			"basenameNormalized": sanitizeName(path.Base(dir)),
			"segments":           strings.Split(dir, "/"),
		}
		if file {
			pm["filename"] = path.Base(p)
			pm["filenameNormalized"] = sanitizeName(path.Base(p))
		}
		if prefix != "" {
			return map[string]any{prefix: map[string]any{"path": pm}}
		}
		return map[string]any{"path": pm}
	}
	name := "path"
	if prefix != "" {
		name = prefix + ".path"
	}
	out := map[string]any{
		name:                         dir,
		name + ".basename":           path.Base(dir),
		name + ".basenameNormalized": sanitizeName(path.Base(dir)),
	}
	if file {
		out[name+".filename"] = path.Base(p)
		out[name+".filenameNormalized"] = sanitizeName(path.Base(p))
	}
	for i, s := range strings.Split(dir, "/") {
		if s != "" {
			out[name+"["+strconv.Itoa(i)+"]"] = s
		}
	}
	return out
}
