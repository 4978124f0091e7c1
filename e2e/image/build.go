package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// UID is the user driftfix runs as in the image, as in the Dockerfile and
// the chart's securityContext.
const UID = 65532

// Options say what goes into the image.
type Options struct {
	// Binaries are the driftfix binaries by platform ("linux/amd64").
	Binaries map[string]string
	// CACerts is the PEM bundle of CA certificates the image trusts.
	CACerts string
	// Version and Revision label the image; Created dates it and every file
	// in it, so the same inputs give the same digest.
	Version, Revision string
	Created           time.Time
}

// Build returns the image index: one image per platform on an empty base,
// each one layer holding the binary, the CA bundle, /etc/passwd and
// /etc/group naming the driftfix user, and its state directory, configured
// as the Dockerfile configures it.
func Build(o Options) (v1.ImageIndex, error) {
	if len(o.Binaries) == 0 {
		return nil, fmt.Errorf("no binary given")
	}
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("read the CA bundle: %w", err)
	}
	var adds []mutate.IndexAddendum
	for _, p := range sortedKeys(o.Binaries) {
		osName, arch, ok := strings.Cut(p, "/")
		if !ok || osName != "linux" || arch == "" {
			return nil, fmt.Errorf("platform %q: want linux/ARCH", p)
		}
		bin, err := os.ReadFile(o.Binaries[p])
		if err != nil {
			return nil, fmt.Errorf("read the %s binary: %w", p, err)
		}
		layer, err := rootfsLayer(bin, certs, o.Created)
		if err != nil {
			return nil, err
		}
		img, err := mutate.AppendLayers(empty.Image, layer)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = osName, arch
		cf.Created = v1.Time{Time: o.Created}
		cf.Config = v1.Config{
			User:         fmt.Sprintf("%d:%d", UID, UID),
			Entrypoint:   []string{"/usr/local/bin/driftfix"},
			Cmd:          []string{"run", "--config=/etc/driftfix/driftfix.yaml"},
			Volumes:      map[string]struct{}{"/var/lib/driftfix": {}},
			ExposedPorts: map[string]struct{}{"8080/tcp": {}},
			Env:          []string{"PATH=/usr/local/bin"},
			Labels:       Labels(o),
		}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		img = mutate.MediaType(mutate.ConfigMediaType(img, types.OCIConfigJSON), types.OCIManifestSchema1)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: osName, Architecture: arch}}})
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	return mutate.AppendManifests(idx, adds...), nil
}

// Labels are the image's OCI annotations, as the Dockerfile writes them.
func Labels(o Options) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "driftfix",
		"org.opencontainers.image.description": "Finds why Argo CD applications stay OutOfSync and opens pull requests with the narrowest fix",
		"org.opencontainers.image.source":      "https://github.com/driftfix/driftfix",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
	}
}

// rootfsLayer writes the image's files as one uncompressed-then-gzipped tar
// layer, entries in a fixed order with fixed times and owners.
func rootfsLayer(bin, certs []byte, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, Uid: uid, Gid: uid, ModTime: created, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: created, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []func() error{
		func() error { return dir("etc/", 0) },
		func() error {
			return file("etc/group", 0o644, fmt.Appendf(nil, "driftfix:x:%d:\n", UID))
		},
		func() error {
			return file("etc/passwd", 0o644, fmt.Appendf(nil, "driftfix:x:%d:%d:driftfix:/var/lib/driftfix:/sbin/nologin\n", UID, UID))
		},
		func() error { return dir("etc/ssl/", 0) },
		func() error { return dir("etc/ssl/certs/", 0) },
		func() error { return file("etc/ssl/certs/ca-certificates.crt", 0o644, certs) },
		func() error { return dir("tmp/", 0) },
		func() error { return dir("usr/", 0) },
		func() error { return dir("usr/local/", 0) },
		func() error { return dir("usr/local/bin/", 0) },
		func() error { return file("usr/local/bin/driftfix", 0o755, bin) },
		func() error { return dir("var/", 0) },
		func() error { return dir("var/lib/", 0) },
		func() error { return dir("var/lib/driftfix/", UID) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, fmt.Errorf("write the image's files: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
