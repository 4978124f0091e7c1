package helmrepo

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

// Index is what predict reads of a chart repository's index.yaml: each
// chart's versions, with their archives' URLs and digests.
type Index struct {
	APIVersion string                  `json:"apiVersion"`
	Entries    map[string][]IndexEntry `json:"entries"`
}

// IndexEntry is one version of a chart in an index.
type IndexEntry struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	// Digest is the archive's SHA-256, hex, as `helm repo index` writes
	// it; "" when the index gives none.
	Digest string `json:"digest"`
}

// ParseIndex reads an index.yaml (YAML or JSON) as Helm reads it: a null
// entry or one without a version is skipped, and each chart's versions are
// sorted highest first (versions that are not semver last, as written).
// Fields predict does not use are ignored, as Argo CD's reader ignores them.
func ParseIndex(data []byte) (*Index, error) {
	if len(data) == 0 {
		return nil, errors.New("read the repository's index.yaml: it is empty")
	}
	var raw struct {
		APIVersion string                   `json:"apiVersion"`
		Entries    map[string][]*IndexEntry `json:"entries"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("read the repository's index.yaml: %w", err)
	}
	if raw.APIVersion == "" {
		return nil, errors.New("read the repository's index.yaml: no apiVersion (it is not a chart repository's index)")
	}
	idx := &Index{APIVersion: raw.APIVersion, Entries: map[string][]IndexEntry{}}
	for name, vs := range raw.Entries {
		var out []IndexEntry
		for _, v := range vs {
			if v == nil || v.Version == "" {
				continue
			}
			out = append(out, *v)
		}
		sort.SliceStable(out, func(i, j int) bool {
			a, ea := semver.NewVersion(out[i].Version)
			b, eb := semver.NewVersion(out[j].Version)
			switch {
			case ea != nil || eb != nil:
				return ea == nil && eb != nil
			}
			return a.GreaterThan(b)
		})
		idx.Entries[name] = out
	}
	return idx, nil
}

// Get is the entry of a chart for a version as `helm pull --version`
// finds it: the entry of exactly that version, else the highest whose
// version meets it read as a semver range.
func (i *Index) Get(chart, version string) (IndexEntry, error) {
	vs := i.Entries[chart]
	for _, v := range vs {
		if v.Version == version {
			return v, nil
		}
	}
	c, err := semver.NewConstraint(version)
	if err != nil {
		return IndexEntry{}, fmt.Errorf("chart %s has no version %s", chart, version)
	}
	for _, v := range vs {
		sv, err := semver.NewVersion(v.Version)
		if err == nil && c.Check(sv) {
			return v, nil
		}
	}
	return IndexEntry{}, fmt.Errorf("chart %s has no version %s", chart, version)
}

// resolveURL is an index's archive URL, relative ones taken from the
// repository's URL (as a folder), its query kept.
func resolveURL(repoURL, ref string) (string, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if r.IsAbs() {
		return ref, nil
	}
	b, err := url.Parse(repoURL)
	if err != nil {
		return "", err
	}
	b.Path = strings.TrimSuffix(b.Path, "/") + "/"
	b.RawPath = ""
	out := b.ResolveReference(r)
	out.RawQuery = b.RawQuery
	return out.String(), nil
}

// repositoryFile is Helm's repositories.yaml, as far as fetching reads it.
type repositoryFile struct {
	Repositories []*repositoryEntry `json:"repositories"`
}

// repositoryEntry is one repository of repositories.yaml.
type repositoryEntry struct {
	Name                  string `json:"name"`
	URL                   string `json:"url"`
	Username              string `json:"username"`
	Password              string `json:"password"`
	CertFile              string `json:"certFile"`
	KeyFile               string `json:"keyFile"`
	CAFile                string `json:"caFile"`
	InsecureSkipTLSverify bool   `json:"insecure_skip_tls_verify"`
	PassCredentialsAll    bool   `json:"pass_credentials_all"`
}
