package gitrepo

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/internal/gittest"
)

// BenchmarkCheckout reads one commit of a repository shaped like a real
// GitOps one (400 manifests; 60 other files beside them: configuration
// files, vendored chart archives; two images over 1 MiB) through a fresh
// cache, and reports the bytes of file content the read holds.
func BenchmarkCheckout(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	work := b.TempDir()
	rnd := rand.New(rand.NewSource(1))
	blob := func(n int) []byte {
		p := make([]byte, n)
		rnd.Read(p)
		return p
	}
	write := func(name string, data []byte) {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 400; i++ {
		write(fmt.Sprintf("apps/a%03d/deployment.yaml", i), []byte(fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a%03d\nspec:\n  replicas: %d\n%s", i, i%5, strings.Repeat("# padding\n", 150))))
	}
	for i := 0; i < 50; i++ {
		write(fmt.Sprintf("apps/a%03d/config/app.conf", i), []byte(fmt.Sprintf("key%d = %x\n", i, blob(2<<10))))
	}
	for i := 0; i < 8; i++ {
		write(fmt.Sprintf("charts/c%d/charts/dep-1.0.0.tgz", i), blob(96<<10))
	}
	write("docs/diagram.png", blob(3<<20/2))
	write("docs/screenshot.png", blob(5<<20/2))
	gittest.Run(b, work, nil, "init", "-q", "-b", "main")
	gittest.Run(b, work, nil, "add", ".")
	gittest.Run(b, work, nil, "commit", "-q", "-m", "one")
	url := "file://" + work
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	var held int64
	for i := 0; i < b.N; i++ {
		got, err := NewCache(8, 256<<20).Files(ctx, url, "main", Limits{})
		if err != nil {
			b.Fatal(err)
		}
		held = 0
		for _, v := range got {
			held += int64(len(v))
		}
	}
	b.ReportMetric(float64(held), "content-bytes")
}
