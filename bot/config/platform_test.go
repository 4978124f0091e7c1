package config

import (
	"strings"
	"testing"
)

func TestPlatformRepos(t *testing.T) {
	const head = "argocd:\n  - {name: main, server: https://argocd.example.com, tokenFile: /t}\n  - {name: edge, server: https://edge.example.com, tokenFile: /t}\n"
	for _, tc := range []struct {
		name, yaml string
		instance   string
		want       PlatformRepo
		ok         bool
		err        string
	}{
		{"a bare URL proposes nothing", "platformRepos: [https://git.example.com/platform.git]\n", "main", PlatformRepo{}, false, ""},
		{"a mapping names the instance and the file", "platformRepos:\n  - {url: https://git.example.com/p.git, instance: edge, file: argocd/values.yaml, branch: live, fleetMin: 5}\n",
			"edge", PlatformRepo{URL: "https://git.example.com/p.git", Instance: "edge", File: "argocd/values.yaml", Branch: "live", FleetMin: 5}, true, ""},
		{"another instance's repository is not used", "platformRepos:\n  - {url: https://git.example.com/p.git, instance: edge, file: cm.yaml}\n", "main", PlatformRepo{}, false, ""},
		{"a file outside the repository is refused", "platformRepos:\n  - {url: https://git.example.com/p.git, file: ../cm.yaml}\n", "", PlatformRepo{}, false, "must be a clean path"},
		{"the URL is required", "platformRepos:\n  - {file: cm.yaml}\n", "", PlatformRepo{}, false, "url is required"},
		{"fleetMin is above 0", "platformRepos:\n  - {url: u, file: cm.yaml, fleetMin: 0}\n", "", PlatformRepo{}, false, "above 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head + tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want an error with %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, ok := c.Platform(tc.instance)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
