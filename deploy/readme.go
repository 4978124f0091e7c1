package deploy

import (
	"fmt"
	"strings"
)

// READMECommand returns the words of the one line of the README that
// starts with prefix, quotes removed (the README's commands use no escapes),
// so that tests run the README's install commands as written:
// READMECommand(readme, "helm install driftfix deploy/chart ").
func READMECommand(readme []byte, prefix string) ([]string, error) {
	var found []string
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("the README has two lines starting %q", prefix)
		}
		for _, w := range strings.Fields(line) {
			found = append(found, strings.Trim(w, `'"`))
		}
	}
	if found == nil {
		return nil, fmt.Errorf("the README has no line starting %q", prefix)
	}
	return found, nil
}
