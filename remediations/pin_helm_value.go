package remediations

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// PinHelmValue makes a generated chart value stable: it points the chart at a
// Secret managed outside it (existingSecret) instead of a random value. It
// never writes a secret value into Git.
var PinHelmValue = Remedy{
	Kind: drift.FixPinHelmValue,
	Doc:  "set the chart value that feeds a random or time-based function to a stable reference",
	Plan: planPinHelmValue,
}

var valuesRef = regexp.MustCompile(`\.Values\.([A-Za-z0-9_.]+)`)

func planPinHelmValue(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	p := Plan{Resource: group[0].Resource}
	src, ok := c.Snapshot.HelmSource()
	if !ok {
		p.Dropped = "the application does not render a Helm chart"
		return p, nil
	}
	values := ""
	for _, vf := range append(append([]string{}, src.ValueFiles...), "values.yaml") {
		if _, ok := c.Repo[path.Join(src.Path, vf)]; ok {
			values = path.Join(src.Path, vf)
			break
		}
	}
	if values == "" {
		p.Dropped = "no values file of the chart is in the repository"
		return p, nil
	}
	key := ""
	for _, f := range c.Snapshot.TemplateFiles() {
		for _, line := range strings.Split(c.Snapshot.Repo.Files[f], "\n") {
			if !strings.Contains(line, "rand") && !strings.Contains(line, "gen") && !strings.Contains(line, "lookup") && !strings.Contains(line, "uuid") {
				continue
			}
			if m := valuesRef.FindStringSubmatch(line); m != nil {
				key = m[1]
				break
			}
		}
		if key != "" {
			break
		}
	}
	if key == "" {
		p.Dropped = "no chart value feeds the generated field; the template must stop generating it"
		return p, nil
	}
	parent := key[:max(0, strings.LastIndex(key, "."))]
	docs, err := yamledit.Documents(c.Repo[values])
	target := key
	if err == nil && len(docs) > 0 {
		if _, ok := drift.Pointer(append(strings.Split(parent, "."), "existingSecret")).Get(docs[0]); ok && parent != "" {
			target = parent + ".existingSecret"
		}
	}
	p.Rationale = Rationale{
		Why:  fmt.Sprintf("the chart generates %s on every render; a reference to a Secret managed outside the chart (%s in %s) makes every render the same, and no secret value is written to Git", key, target, values),
		Risk: "the Secret must exist before the next sync (created by a secret manager or by hand), and Argo CD stops managing the generated one",
		Undo: undoText(values),
	}
	p.Dropped = fmt.Sprintf("set %s in %s to the name of a Secret managed outside the chart; not proposed as an edit: checking it needs a Helm re-render, which this build does not do yet", target, values)
	return p, nil
}
