package drift

// sensitiveFields are fields no ignore rule may ever cover: privilege, identity,
// what runs, and who may do what.
var sensitiveFields = map[string]string{
	"securityContext":              "privilege",
	"capabilities":                 "privilege",
	"privileged":                   "privilege",
	"allowPrivilegeEscalation":     "privilege",
	"hostPath":                     "host access",
	"hostNetwork":                  "host access",
	"hostPID":                      "host access",
	"hostIPC":                      "host access",
	"image":                        "image",
	"serviceAccountName":           "identity",
	"serviceAccount":               "identity",
	"automountServiceAccountToken": "identity",
}

// sensitiveByKind are top-level fields that are sensitive on particular kinds.
var sensitiveByKind = map[string]map[string]string{
	"Role":                           {"rules": "RBAC"},
	"ClusterRole":                    {"rules": "RBAC", "aggregationRule": "RBAC"},
	"RoleBinding":                    {"subjects": "RBAC", "roleRef": "RBAC"},
	"ClusterRoleBinding":             {"subjects": "RBAC", "roleRef": "RBAC"},
	"MutatingWebhookConfiguration":   {"clientConfig": "webhook endpoint"},
	"ValidatingWebhookConfiguration": {"clientConfig": "webhook endpoint"},
}

// Sensitivity decides which paths are too sensitive to ever ignore. The zero
// value holds the built-in list; Extra adds field names from policy.
type Sensitivity struct {
	Extra map[string]string
}

func (s Sensitivity) field(kind, name string) (string, bool) {
	if why, ok := sensitiveFields[name]; ok {
		return why, true
	}
	if why, ok := sensitiveByKind[kind][name]; ok {
		return why, true
	}
	why, ok := s.Extra[name]
	return why, ok
}

// Check reports whether p names a sensitive field, or covers one that git (the
// desired object) declares beneath p. It returns the field and why it matters.
func (s Sensitivity) Check(kind string, p Pointer, git Object) (field Pointer, why string, ok bool) {
	for i, tok := range p {
		if why, ok := s.field(kind, tok); ok {
			return p[:i+1], why, true
		}
	}
	if git == nil {
		return nil, "", false
	}
	sub, found := p.Get(git)
	if !found {
		return nil, "", false
	}
	return s.find(kind, p, sub, 0)
}

func (s Sensitivity) find(kind string, at Pointer, v any, depth int) (Pointer, string, bool) {
	if depth > 64 {
		return nil, "", false
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range SortedKeys(x) {
			if why, ok := s.field(kind, k); ok {
				return at.Child(k), why, true
			}
		}
		for _, k := range SortedKeys(x) {
			if f, why, ok := s.find(kind, at.Child(k), x[k], depth+1); ok {
				return f, why, true
			}
		}
	case []any:
		for i, e := range x {
			if f, why, ok := s.find(kind, at.Index(i), e, depth+1); ok {
				return f, why, true
			}
		}
	}
	return nil, "", false
}
