package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// metaSchemas are the $schema values Helm's validator knows without loading
// anything: the JSON Schema drafts it carries, by either scheme.
var metaSchemas = map[string]bool{
	"json-schema.org/schema": true, "json-schema.org/draft-04/schema": true, "json-schema.org/draft-06/schema": true,
	"json-schema.org/draft-07/schema": true, "json-schema.org/draft/2019-09/schema": true, "json-schema.org/draft/2020-12/schema": true,
}

func knownMetaSchema(s string) bool {
	s = strings.TrimSuffix(s, "#")
	u, ok := strings.CutPrefix(s, "http://")
	if !ok {
		u, ok = strings.CutPrefix(s, "https://")
	}
	return ok && metaSchemas[u]
}

// refKeys are the keywords by which a schema refers to another.
var refKeys = map[string]bool{"$ref": true, "$dynamicRef": true, "$recursiveRef": true}

// checkSchemas refuses a values.schema.json (of the chart or a subchart,
// file being the chart's Chart.yaml) that refers outside itself. Helm
// validates values against it with loaders for http, https and file URLs, and
// resolves a relative reference against file:///, so any reference that is
// not a fragment of the same document is a request to the network or a read
// of the bot's own disk, whose content comes back in the validation error.
func checkSchemas(c *chart.Chart, file string) error {
	if c.Schema != nil {
		name := path.Join(path.Dir(file), "values.schema.json")
		dec := json.NewDecoder(bytes.NewReader(c.Schema))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if err := schemaRefs(name, doc); err != nil {
			return err
		}
	}
	for _, d := range c.Dependencies() {
		if err := checkSchemas(d, path.Join(path.Dir(file), "charts", d.Name(), "Chart.yaml")); err != nil {
			return err
		}
	}
	return nil
}

func schemaRefs(file string, v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			s, isString := sub.(string)
			switch {
			case !isString:
			case refKeys[k] && !strings.HasPrefix(s, "#"):
				return &RemoteError{File: file, URL: s, Why: "a schema may only refer within itself; references are not fetched or read"}
			case k == "$schema" && !knownMetaSchema(s):
				return &RemoteError{File: file, URL: s, Why: "only the standard JSON Schema drafts may be named in $schema; others are not fetched"}
			}
			if err := schemaRefs(file, sub); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := schemaRefs(file, e); err != nil {
				return err
			}
		}
	}
	return nil
}
