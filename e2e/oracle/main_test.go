package oracle

import (
	"os"
	"testing"

	log "github.com/sirupsen/logrus"
)

func TestMain(m *testing.M) {
	// Argo CD's settings manager logs every informer start at info level.
	log.SetLevel(log.WarnLevel)
	os.Exit(m.Run())
}
