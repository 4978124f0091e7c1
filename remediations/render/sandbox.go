package render

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
)

// checkKustomizeLocal walks the kustomizations reachable from dir and refuses
// any entry kustomize would fetch: an http(s) file, a git repository (remote
// base, resource, component, generator) or a chart repository. kustomize
// itself would fetch them with its own HTTP client or by running git, which
// no option turns off, so they are refused before the build starts.
//
// Each kustomization is read with kustomize's own types and fix-ups, so the
// check sees what the build will: keys matched without regard to case, the
// last of a key given twice, deprecated fields moved to their new homes.
// Generator, transformer and validator configs (files, directories of them,
// or inline) are read with kustomize's resource factory and every field a
// builtin plugin loads is checked.
func checkKustomizeLocal(files map[string][]byte, dir string) error {
	c := &kustCheck{files: files, seen: map[string]bool{}, rmf: resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory())}
	return c.walk(strings.Trim(path.Clean("/"+dir), "/"), false)
}

type kustCheck struct {
	files map[string][]byte
	seen  map[string]bool
	rmf   *resmap.Factory
}

// walk checks the kustomization in dir. configs is set when its resources
// are plugin configs (it was named under generators, transformers or
// validators).
func (c *kustCheck) walk(dir string, configs bool) error {
	key := fmt.Sprint(dir, configs)
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	kf := ""
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if _, ok := c.files[path.Join(dir, n)]; ok {
			kf = path.Join(dir, n)
			break
		}
	}
	if kf == "" {
		return nil // kustomize reports the missing kustomization itself
	}
	var k types.Kustomization
	if err := k.Unmarshal(c.files[kf]); err != nil {
		return fmt.Errorf("read %s: %w", kf, err)
	}
	k.FixKustomization() // bases into resources, helmChartInflationGenerator into helmCharts, env into envs
	for _, e := range k.Resources {
		if err := c.entry(kf, dir, "resources", e, configs); err != nil {
			return err
		}
	}
	for _, e := range k.Components {
		if err := c.entry(kf, dir, "components", e, configs); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		field string
		list  []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		field := f.field
		for _, e := range f.list {
			// kustomize takes an entry that parses as objects for an inline config.
			if rm, err := c.rmf.NewResMapFromBytes([]byte(e)); err == nil {
				if err := c.configs(kf, rm); err != nil {
					return err
				}
				continue
			}
			if err := c.entry(kf, dir, field, e, true); err != nil {
				return err
			}
		}
	}
	// Entries kustomize only ever loads as files (over HTTP when they are URLs).
	var loaded []string
	loaded = append(loaded, k.Configurations...)
	loaded = append(loaded, k.Crds...)
	loaded = append(loaded, k.OpenAPI["path"])
	for _, p := range k.PatchesStrategicMerge {
		loaded = append(loaded, string(p))
	}
	for _, p := range append(append([]types.Patch{}, k.Patches...), k.PatchesJson6902...) {
		loaded = append(loaded, p.Path)
	}
	for _, r := range k.Replacements {
		loaded = append(loaded, r.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		loaded = append(loaded, kvSources(g.KvPairSources)...)
	}
	for _, g := range k.SecretGenerator {
		loaded = append(loaded, kvSources(g.KvPairSources)...)
	}
	for _, h := range k.HelmCharts {
		if h.Repo != "" {
			return &RemoteError{File: kf, URL: h.Repo, Why: "charts are not pulled from a chart repository"}
		}
		loaded = append(loaded, h.ValuesFile)
		loaded = append(loaded, h.AdditionalValuesFiles...)
	}
	for _, e := range loaded {
		if fetched(e) {
			return &RemoteError{File: kf, URL: e, Why: "files from outside the repository are not fetched"}
		}
	}
	return nil
}

// entry checks one resources, components, generators, transformers or
// validators entry of the kustomization kf in dir, in the order kustomize
// tries it: a URL, a file, a git repository, a directory.
func (c *kustCheck) entry(kf, dir, field, e string, configs bool) error {
	if fetched(e) {
		return &RemoteError{File: kf, URL: e, Why: field + " from outside the repository are not fetched"}
	}
	p := resolve(dir, e)
	if data, isFile := c.files[p]; isFile {
		if !configs {
			return nil
		}
		rm, err := c.rmf.NewResMapFromBytes(data)
		if err != nil {
			return nil // kustomize reports the file it cannot read
		}
		return c.configs(p, rm)
	}
	if looksRemote(e) {
		return &RemoteError{File: kf, URL: e, Why: field + " from outside the repository are not fetched"}
	}
	if isDir(c.files, p) {
		return c.walk(p, configs)
	}
	return nil
}

// configs checks the plugin configs read from file: every field a builtin
// generator or transformer loads a file from, and a chart repository.
// Plugins read their config with case-insensitive keys, so keys are
// compared in lower case.
func (c *kustCheck) configs(file string, rm resmap.ResMap) error {
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			return fmt.Errorf("read %s: %w", file, err)
		}
		if err := configFields(file, m); err != nil {
			return err
		}
	}
	return nil
}

// loadedKeys are the plugin config fields whose values are files a builtin
// plugin loads (ConfigMap/SecretGenerator files, envs and env;
// Patch/PatchJson6902Transformer path; PatchStrategicMergeTransformer paths;
// ReplacementTransformer replacements[].path; ValueAddTransformer
// targetFilePath; HelmChartInflationGenerator values files).
var loadedKeys = map[string]bool{"files": true, "envs": true, "env": true, "path": true, "paths": true,
	"targetfilepath": true, "valuesfile": true, "additionalvaluesfiles": true}

// repoKeys are the fields naming a chart repository.
var repoKeys = map[string]bool{"repo": true, "chartrepourl": true}

func configFields(file string, v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			lk := strings.ToLower(k)
			for _, s := range strings1(sub) {
				if repoKeys[lk] && s != "" {
					return &RemoteError{File: file, URL: s, Why: "charts are not pulled from a chart repository"}
				}
				if lk == "files" {
					if _, src, ok := strings.Cut(s, "="); ok {
						s = src
					}
				}
				if loadedKeys[lk] && fetched(s) {
					return &RemoteError{File: file, URL: s, Why: "files from outside the repository are not fetched"}
				}
			}
			if err := configFields(file, sub); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := configFields(file, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// strings1 is a string value, or the strings of a list value.
func strings1(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// kvSources are the files a ConfigMap or Secret generator loads.
func kvSources(s types.KvPairSources) []string {
	out := append([]string{}, s.EnvSources...)
	out = append(out, s.EnvSource)
	for _, f := range s.FileSources {
		if _, src, ok := strings.Cut(f, "="); ok {
			f = src
		}
		out = append(out, f)
	}
	return out
}

// resolve is the repository path kustomize reads for entry e of the
// kustomization in dir (the build's file system is rooted at the repository).
func resolve(dir, e string) string {
	if path.IsAbs(e) {
		return strings.TrimPrefix(path.Clean(e), "/")
	}
	return path.Join(dir, e)
}

// fetched reports whether kustomize's loader would fetch e over HTTP (an
// http or https URL, whatever its case) or e names another scheme.
func fetched(e string) bool {
	if strings.Contains(e, "\n") {
		return false // an inline patch or config
	}
	scheme, _, _ := strings.Cut(strings.TrimSpace(e), ":")
	if s := strings.ToLower(scheme); s == "http" || s == "https" {
		return true // kustomize's loader fetches what url.Parse gives this scheme
	}
	return hasScheme(e)
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
