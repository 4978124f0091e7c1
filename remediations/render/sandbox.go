package render

import (
	"path"
	"strings"

	"gopkg.in/yaml.v3"
)

// kustomizationNames are the file names kustomize reads in a directory.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// checkKustomizeLocal walks the kustomizations reachable from dir and refuses
// any entry kustomize would fetch: an http(s) file, a git repository (remote
// base, resource, component, generator) or a chart repository. kustomize
// itself would fetch them with its own HTTP client or by running git, which
// no option turns off, so they are refused before the build starts.
func checkKustomizeLocal(files map[string][]byte, dir string) error {
	seen := map[string]bool{}
	var walk func(dir string) error
	walk = func(dir string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		kf := ""
		for _, n := range kustomizationNames {
			if _, ok := files[path.Join(dir, n)]; ok {
				kf = path.Join(dir, n)
				break
			}
		}
		if kf == "" {
			return nil // kustomize reports the missing kustomization itself
		}
		var k map[string]any
		if err := yaml.Unmarshal(files[kf], &k); err != nil {
			return nil // kustomize reports the syntax error with its context
		}
		// Entries that may be a file, a directory or a git repository.
		for _, field := range []string{"resources", "bases", "components", "generators", "transformers", "validators"} {
			for _, e := range stringList(k[field]) {
				if strings.Contains(e, "\n") {
					continue // an inline generator or transformer config
				}
				p := path.Join(dir, e)
				if _, isFile := files[p]; isFile {
					continue
				}
				if looksRemote(e) {
					return &RemoteError{File: kf, URL: e, Why: field + " from outside the repository are not fetched"}
				}
				if isDir(files, p) {
					if err := walk(p); err != nil {
						return err
					}
				}
			}
		}
		// Entries kustomize only ever loads as files (over HTTP when they are URLs).
		var loaded []string
		for _, field := range []string{"patchesStrategicMerge", "configurations", "crds"} {
			loaded = append(loaded, stringList(k[field])...)
		}
		for _, field := range []string{"patches", "patchesJson6902", "replacements"} {
			for _, e := range anyList(k[field]) {
				if m, ok := e.(map[string]any); ok {
					loaded = append(loaded, str(m["path"]))
				}
			}
		}
		if m, ok := k["openapi"].(map[string]any); ok {
			loaded = append(loaded, str(m["path"]))
		}
		for _, field := range []string{"configMapGenerator", "secretGenerator"} {
			for _, e := range anyList(k[field]) {
				m, _ := e.(map[string]any)
				for _, f := range stringList(m["files"]) {
					if _, src, ok := strings.Cut(f, "="); ok {
						f = src
					}
					loaded = append(loaded, f)
				}
				loaded = append(loaded, stringList(m["envs"])...)
				loaded = append(loaded, str(m["env"]))
			}
		}
		for _, e := range loaded {
			if !strings.Contains(e, "\n") && hasScheme(e) {
				return &RemoteError{File: kf, URL: e, Why: "files from outside the repository are not fetched"}
			}
		}
		for _, e := range anyList(k["helmCharts"]) {
			m, _ := e.(map[string]any)
			if r := str(m["repo"]); r != "" {
				return &RemoteError{File: kf, URL: r, Why: "charts are not pulled from a chart repository"}
			}
		}
		for _, e := range anyList(k["helmChartInflationGenerator"]) {
			m, _ := e.(map[string]any)
			if r := str(m["chartRepoUrl"]); r != "" {
				return &RemoteError{File: kf, URL: r, Why: "charts are not pulled from a chart repository"}
			}
		}
		return nil
	}
	return walk(strings.Trim(path.Clean("/"+dir), "/"))
}

// looksRemote reports whether kustomize would treat a resource entry as a
// URL or a git repository rather than a path: it has a scheme, a git user
// or forced-git prefix, a query or a "//" root, or starts with a host name.
func looksRemote(e string) bool {
	if hasScheme(e) || strings.HasPrefix(e, "git@") || strings.HasPrefix(e, "git::") || strings.HasPrefix(e, "gh:") ||
		strings.Contains(e, "?") || strings.Contains(strings.TrimPrefix(e, "./"), "//") || strings.Contains(e, "@") {
		return true
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(e, "./"), "/")
	return first != "." && first != ".." && strings.Contains(first, ".") && !strings.HasSuffix(first, ".yaml") && !strings.HasSuffix(first, ".yml") && !strings.HasSuffix(first, ".json")
}

func hasScheme(e string) bool {
	scheme, _, ok := strings.Cut(e, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/.")
}

func isDir(files map[string][]byte, dir string) bool {
	prefix := strings.Trim(dir, "/") + "/"
	for name := range files {
		if strings.HasPrefix(strings.TrimPrefix(name, "/"), prefix) {
			return true
		}
	}
	return false
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func stringList(v any) []string {
	var out []string
	for _, e := range anyList(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// checkStaged bounds the bytes a kustomize build is staged with (the
// repository reader bounds how many files there are).
func checkStaged(files map[string][]byte, what string, lim Limits) error {
	var total int64
	for _, d := range files {
		total += int64(len(d))
	}
	if over(total, lim.MaxChartBytes) {
		return &LimitError{Limit: "MaxChartBytes", What: what, Got: humanBytes(float64(total)), Max: humanBytes(float64(lim.MaxChartBytes))}
	}
	return nil
}
