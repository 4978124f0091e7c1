// Command image builds driftfix's container image as an OCI image layout
// without a container daemon (go-containerregistry on an empty base), for
// each platform a binary is given:
//
//	CGO_ENABLED=0 GOARCH=amd64 go build -trimpath -o bin/amd64/driftfix ./cmd/driftfix
//	CGO_ENABLED=0 GOARCH=arm64 go build -trimpath -o bin/arm64/driftfix ./cmd/driftfix
//	cd e2e/image && go run . -o ../../driftfix-oci \
//	    -bin linux/amd64=../../bin/amd64/driftfix -bin linux/arm64=../../bin/arm64/driftfix \
//	    -version v0.1.0 -revision $(git rev-parse HEAD)
//
// The layout can then be pushed with crane or skopeo. The same binaries,
// version, revision and creation time give the same digest.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

type binFlag map[string]string

func (b binFlag) String() string { return fmt.Sprint(map[string]string(b)) }

func (b binFlag) Set(v string) error {
	p, path, ok := strings.Cut(v, "=")
	if !ok || p == "" || path == "" {
		return fmt.Errorf("want PLATFORM=PATH, such as linux/amd64=bin/amd64/driftfix, not %q", v)
	}
	b[p] = path
	return nil
}

func main() {
	bins := binFlag{}
	out := flag.String("o", "", "the OCI image layout directory to write (created; must not exist)")
	flag.Var(bins, "bin", "PLATFORM=PATH of a driftfix binary; repeat for each platform")
	version := flag.String("version", "dev", "the image's version label")
	revision := flag.String("revision", "", "the source revision label")
	certs := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle the image trusts")
	created := flag.String("created", "", "creation time, RFC 3339 (default: $SOURCE_DATE_EPOCH, else the Unix epoch)")
	flag.Parse()
	if err := run(*out, bins, *version, *revision, *certs, *created); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(out string, bins binFlag, version, revision, certs, created string) error {
	if out == "" {
		return fmt.Errorf("-o DIR is required")
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists; give a new directory", out)
	}
	when, err := creationTime(created, os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	idx, err := Build(Options{Binaries: bins, CACerts: certs, Version: version, Revision: revision, Created: when})
	if err != nil {
		return err
	}
	if _, err := layout.Write(out, idx); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Println(d)
	return nil
}

// creationTime reads -created, else SOURCE_DATE_EPOCH, else the epoch.
func creationTime(flagValue, epoch string) (time.Time, error) {
	switch {
	case flagValue != "":
		t, err := time.Parse(time.RFC3339, flagValue)
		if err != nil {
			return time.Time{}, fmt.Errorf("-created: %w", err)
		}
		return t.UTC(), nil
	case epoch != "":
		s, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", epoch)
		}
		return time.Unix(s, 0).UTC(), nil
	}
	return time.Unix(0, 0).UTC(), nil
}
