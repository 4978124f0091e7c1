package predict

import (
	"encoding/base64"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/driftfix/driftfix/bot/drift"
)

// rewrite is something Kubernetes is known to do to Git's manifest when it
// stores it, beyond the type's own encoding (bot/diff's stored form) and a
// CRD's structural schema: knowledge, one entry each, with where it comes
// from. Applies is asked with the object and its CRD (nil when none is in
// the render or the cluster context); Apply changes the predicted live
// object in place.
type rewrite struct {
	Name, Doc, Source string
	Applies           func(obj, crd drift.Object) bool
	Apply             func(live drift.Object)
}

// rewrites are applied in order to every object's predicted live state.
var rewrites = []rewrite{
	{
		Name:   "secret-stringdata",
		Doc:    "the API server stores a Secret's stringData in data, base64-encoded, and keeps no stringData",
		Source: "Kubernetes Secret API (stringData is write-only)",
		Applies: func(obj, _ drift.Object) bool {
			return drift.Str(obj, "apiVersion") == "v1" && drift.Str(obj, "kind") == "Secret"
		},
		Apply: foldStringData,
	},
	{
		Name: "conversion-webhook",
		Doc: "a CRD whose objects are stored in another version through a conversion webhook: the webhook decodes " +
			"the object into its Go types and encodes it again, so quantities and durations come back in canonical form",
		Source:  "Kubernetes CRD versioning (conversion webhooks); testdata/cases/09-cr-quantity-conversion",
		Applies: storedThroughConversion,
		Apply:   func(live drift.Object) { canonicalize(live["spec"], 0) },
	},
	{
		Name: "cert-manager-durations",
		Doc: "cert-manager's Certificate duration and renewBefore are metav1.Duration fields, which cert-manager's webhook " +
			"re-encodes as Go durations (2160h is stored as 2160h0m0s)",
		Source: "cert-manager.io/v1 Certificate API; testdata/cases/15-duration-normalized",
		Applies: func(obj, _ drift.Object) bool {
			g, _ := drift.SplitAPIVersion(drift.Str(obj, "apiVersion"))
			return g == "cert-manager.io" && drift.Str(obj, "kind") == "Certificate"
		},
		Apply: func(live drift.Object) {
			spec := drift.Map(live, "spec")
			for _, k := range []string{"duration", "renewBefore"} {
				if s, ok := spec[k].(string); ok {
					if d, err := time.ParseDuration(s); err == nil {
						spec[k] = d.String()
					}
				}
			}
		},
	},
	{
		Name: "hpa-v1-storage-metric-order",
		Doc: "an autoscaling/v2beta1 or v2beta2 HorizontalPodAutoscaler is served by clusters that stored HPAs as autoscaling/v1: " +
			"the cpu Resource metric goes to targetCPUUtilizationPercentage and the others to an annotation, so the metrics " +
			"come back with the cpu metric last",
		Source: "kubernetes/kubernetes#74099; testdata/realworld/03-memcached-sts-hpa-metric-order",
		Applies: func(obj, _ drift.Object) bool {
			av := drift.Str(obj, "apiVersion")
			return drift.Str(obj, "kind") == "HorizontalPodAutoscaler" && (av == "autoscaling/v2beta1" || av == "autoscaling/v2beta2")
		},
		Apply: func(live drift.Object) {
			spec := drift.Map(live, "spec")
			ms, _ := spec["metrics"].([]any)
			var cpu, rest []any
			for _, m := range ms {
				if drift.Str(m, "type") == "Resource" && drift.Str(m, "resource", "name") == "cpu" {
					cpu = append(cpu, m)
				} else {
					rest = append(rest, m)
				}
			}
			if len(cpu) == 1 && len(rest) > 0 {
				spec["metrics"] = append(rest, cpu...)
			}
		},
	},
}

// storedThroughConversion says whether a CRD stores the object's version as
// another one through a conversion webhook.
func storedThroughConversion(obj, crd drift.Object) bool {
	if crd == nil || drift.Str(crd, "spec", "conversion", "strategy") != "Webhook" {
		return false
	}
	_, version := drift.SplitAPIVersion(drift.Str(obj, "apiVersion"))
	for _, v := range drift.List(crd, "spec", "versions") {
		if st, _ := drift.Lookup(v, "storage").(bool); st {
			return drift.Str(v, "name") != version
		}
	}
	return false
}

// canonicalize rewrites, in place, strings that are quantities or Go
// durations in their canonical form. A string that reads as both (5m: five
// minutes or five thousandths) is a duration under a key that names a time,
// else a quantity.
func canonicalize(v any, depth int) {
	if depth > 64 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				x[k] = canonical(k, s)
				continue
			}
			canonicalize(e, depth+1)
		}
	case []any:
		for i, e := range x {
			if s, ok := e.(string); ok {
				x[i] = canonical("", s)
				continue
			}
			canonicalize(e, depth+1)
		}
	}
}

// timeKeys are words in a key that name a time.
var timeKeys = []string{"duration", "timeout", "interval", "period", "ttl", "delay", "after", "before", "wait", "age", "window", "time"}

func canonical(key, s string) string {
	if s == "" || strings.TrimLeft(s, "0123456789") == "" {
		return s
	}
	q, qerr := resource.ParseQuantity(s)
	d, derr := time.ParseDuration(s)
	switch {
	case qerr == nil && derr == nil:
		k := strings.ToLower(key)
		for _, w := range timeKeys {
			if strings.Contains(k, w) {
				return d.String()
			}
		}
		return q.String()
	case qerr == nil:
		return q.String()
	case derr == nil:
		return d.String()
	}
	return s
}

// foldStringData moves a Secret's stringData into data, as the API server
// stores it (and as Argo CD compares both sides).
func foldStringData(o drift.Object) {
	sd, ok := o["stringData"].(map[string]any)
	if !ok {
		return
	}
	data, _ := o["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		str, _ := v.(string)
		data[k] = base64.StdEncoding.EncodeToString([]byte(str))
	}
	o["data"] = data
	delete(o, "stringData")
}
