package githubtest

import "testing"

// TestEveryRouteHasItsPermission: each REST route the emulator serves says
// what an installation token needs for it, and the table names no route the
// emulator does not serve.
func TestEveryRouteHasItsPermission(t *testing.T) {
	served := map[string]bool{gitReadRoute: true}
	for _, rt := range routes {
		served[rt] = true
		gs, ok := routeGrants[rt]
		if !ok {
			t.Errorf("route %s has no entry in routeGrants", rt)
		}
		for _, g := range gs {
			if levels[g.Access] == 0 || g.Name == "" {
				t.Errorf("route %s: grant %v is not a permission at read, write or admin", rt, g)
			}
		}
		if gs == nil && !userOnly[rt] {
			t.Errorf("route %s: nil grants mean a person's token only; list it in userOnly or give it {}", rt)
		}
	}
	for rt := range routeGrants {
		if !served[rt] {
			t.Errorf("routeGrants names %s, which the emulator does not serve", rt)
		}
	}
}
