package templates

import (
	"cmp"
	"slices"
	"strings"
)

// The order of a digest's lines, so that what is published does not depend
// on the order a cycle's workers finished in. A fleet's digest has tens of
// thousands of lines: the keys are made once per line, not once per
// comparison, and the lines are moved once, after their order is found.

// appKey names an application across instances, as the cycle's AppKey does.
func appKey(instance, namespace, name string) string {
	return instance + "/" + namespace + "/" + name
}

// SortAppLines sorts applications' lines stably by application.
func SortAppLines(lines []AppLine) {
	sortByKeys(lines, func(l AppLine) [3]string { return [3]string{appKey(l.Instance, l.Namespace, l.App)} })
}

// SortPeople sorts lines left for people stably by application, resource
// and path.
func SortPeople(lines []PersonLine) { sortByKeys(lines, peopleKey) }

func peopleKey(l PersonLine) [3]string {
	return [3]string{appKey(l.Instance, l.Namespace, l.App), l.Resource.String(), l.Path}
}

// GatherPeople joins applications' lines left for people, each group one
// application's lines sorted (SortPeople), into one list in order, copied
// once into a list of their number (appending each application's would
// copy a fleet's lines again at every growth): the groups are put in
// order, not their lines, unless a group holds more than one application
// or two groups the same one. Nil when every group is empty.
func GatherPeople(in [][]PersonLine) []PersonLine {
	groups := make([][]PersonLine, 0, len(in))
	for _, g := range in {
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	keys := make([]string, len(groups))
	order := make([]int32, len(groups))
	whole := false // some application's lines are not one sorted group
	for i, g := range groups {
		keys[i], order[i] = appKey(g[0].Instance, g[0].Namespace, g[0].App), int32(i)
		for j := 1; j < len(g) && !whole; j++ {
			whole = g[j].App != g[0].App || g[j].Namespace != g[0].Namespace || g[j].Instance != g[0].Instance
		}
	}
	slices.SortFunc(order, func(i, j int32) int {
		if c := strings.Compare(keys[i], keys[j]); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	for i := 1; i < len(order) && !whole; i++ {
		whole = keys[order[i]] == keys[order[i-1]]
	}
	sorted := make([][]PersonLine, len(groups))
	for i, o := range order {
		sorted[i] = groups[o]
	}
	out := slices.Concat(sorted...)
	if whole {
		SortPeople(out)
	}
	return out
}

// sortByKeys sorts s stably by the keys key gives each element, compared
// in order: the keys are made once per element, and the elements are
// moved once, after their order is found.
func sortByKeys[T any](s []T, key func(T) [3]string) {
	keys := make([][3]string, len(s))
	order := make([]int32, len(s))
	for i, v := range s {
		keys[i], order[i] = key(v), int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &keys[i], &keys[j]
		for x := range a {
			if c := strings.Compare(a[x], b[x]); c != 0 {
				return c
			}
		}
		return cmp.Compare(i, j) // stable: equal keys keep their order
	})
	sorted := make([]T, len(s))
	for i, o := range order {
		sorted[i] = s[o]
	}
	copy(s, sorted)
}
