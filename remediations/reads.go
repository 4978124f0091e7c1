package remediations

// SourceReads returns every file of the repository a source at dir may read:
// its kustomization and every file or directory it names, recursively (bases
// and components outside dir included), or, without a kustomization, every
// file under dir. driftfix predict asks it which applications a change
// touches.
func SourceReads(repo Repo, dir string) map[string]bool {
	reads := map[string]bool{}
	readsOf(repo, dir, reads, 0)
	return reads
}
