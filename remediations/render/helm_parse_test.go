package render

import (
	"net/url"
	"os"
	"testing"

	k8sversion "k8s.io/apimachinery/pkg/util/version"
)

// FuzzExpandAsArgoCD: the environment substitution of value files and
// parameters is the one Argo CD runs (Go's os.Expand).
func FuzzExpandAsArgoCD(f *testing.F) {
	for _, s := range []string{"$ARGOCD_APP_NAME/x", "${A}-${B}", "$$", "$", "a$", "${", "${}", "${A", "$1$*$#", "${*}", "$values/a", "x$-y", "$_a_1.b"} {
		f.Add(s)
	}
	mapping := func(name string) string { return "<" + name + ">" }
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := expand(s, mapping), os.Expand(s, mapping); got != want {
			t.Fatalf("expand(%q) = %q, os.Expand gives %q", s, got, want)
		}
	})
}

// FuzzURLSchemeAsArgoCD: a value file is remote exactly where Argo CD,
// parsing it as a URL, finds a scheme.
func FuzzURLSchemeAsArgoCD(f *testing.F) {
	for _, s := range []string{"https://x/y.yaml", "values.yaml", "/a/b", "s3://b/k", "c:/x", "1a:b", ":x", "a+b.c-d:rest", "a b:c", "x\x01:y", "HTTP://X"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := ""
		if u, err := url.Parse(s); err == nil {
			want = u.Scheme
		}
		got := urlScheme(s)
		if got == want {
			return
		}
		// net/url lower-cases the scheme; a URL it cannot parse past its
		// scheme (a bad host or escape) is taken as remote here, which is
		// not rendered either way.
		if u, err := url.Parse(s); (err == nil && u.Scheme == lower(got)) || (err != nil && got != "") {
			return
		}
		t.Fatalf("urlScheme(%q) = %q, url.Parse gives %q", s, got, want)
	})
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// FuzzKubeVersionAsArgoCD: an Application's kubeVersion is read as Argo CD
// reads it (Kubernetes' generic version parsing) before helm sees it.
func FuzzKubeVersionAsArgoCD(f *testing.F) {
	for _, s := range []string{"1.29", "v1.29.3-eks-1", "1", "01.2", "1.02", " v1.30.0+k3s1 ", "latest", "1.2.3.4", "v1.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := genericVersion(s)
		v, kerr := k8sversion.ParseGeneric(s)
		if (err == nil) != (kerr == nil) {
			t.Fatalf("genericVersion(%q) err %v, Kubernetes' %v", s, err, kerr)
		}
		if err == nil && got != v.String() {
			t.Fatalf("genericVersion(%q) = %q, Kubernetes reads %q", s, got, v.String())
		}
	})
}
