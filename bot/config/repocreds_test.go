package config

import (
	"strings"
	"testing"
)

const argo = "argocd: [{server: https://a.example.com, tokenFile: t}]\n"

func TestRepoCredentials(t *testing.T) {
	c, err := Parse([]byte(argo + `repoCredentials:
  - urlPrefix: https://git.example.com/team/
    tokenFile: /var/run/secrets/git/token
    username: oauth2
    caFile: /etc/ssl/internal-ca.pem
  - urlPrefix: git@git.example.com:platform/
    sshKeyFile: /var/run/secrets/git/id_ed25519
    knownHostsFile: /var/run/secrets/git/known_hosts
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []RepoCredential{
		{URLPrefix: "https://git.example.com/team/", TokenFile: "/var/run/secrets/git/token", Username: "oauth2", CAFile: "/etc/ssl/internal-ca.pem", Key: "repoCredentials[0]", Line: 3},
		{URLPrefix: "git@git.example.com:platform/", SSHKeyFile: "/var/run/secrets/git/id_ed25519", KnownHostsFile: "/var/run/secrets/git/known_hosts", Key: "repoCredentials[1]", Line: 7},
	}
	if len(c.RepoCredentials) != len(want) {
		t.Fatalf("repoCredentials = %+v", c.RepoCredentials)
	}
	for i := range want {
		if c.RepoCredentials[i] != want[i] {
			t.Errorf("repoCredentials[%d] = %+v, want %+v", i, c.RepoCredentials[i], want[i])
		}
	}
}

func TestRepoCredentialErrors(t *testing.T) {
	for _, tt := range []struct {
		name, in, key string
		line          int
		msg           string
	}{
		{"no prefix", "repoCredentials:\n  - tokenFile: /t\n", "repoCredentials[0].urlPrefix", 3, "is required"},
		{"empty prefix", "repoCredentials:\n  - {urlPrefix: '', tokenFile: /t}\n", "repoCredentials[0].urlPrefix", 3, "is empty"},
		{"no credential", "repoCredentials:\n  - urlPrefix: https://git.example.com/\n", "repoCredentials[0]", 3, "needs tokenFile"},
		{"CA only over ssh", "repoCredentials:\n  - {urlPrefix: 'git@git.example.com:t/', caFile: /ca}\n", "repoCredentials[0]", 3, "needs tokenFile"},
		{"both", "repoCredentials:\n  - {urlPrefix: https://git.example.com/, tokenFile: /t, sshKeyFile: /k, knownHostsFile: /h}\n", "repoCredentials[0]", 3, "not both"},
		{"plain http", "repoCredentials:\n  - urlPrefix: http://git.example.com/\n    tokenFile: /t\n", "repoCredentials[0].urlPrefix", 3, "clear text"},
		{"credentials in the URL", "repoCredentials:\n  - {urlPrefix: 'https://me:pw@git.example.com/', tokenFile: /t}\n", "repoCredentials[0].urlPrefix", 3, "never written in the config"},
		{"credentials in a plain http URL", "repoCredentials:\n  - {urlPrefix: 'http://me:pw@git.example.com/', tokenFile: /t}\n", "repoCredentials[0].urlPrefix", 3, "never written in the config"},
		{"not a URL", "repoCredentials:\n  - {urlPrefix: git.example.com/team, tokenFile: /t}\n", "repoCredentials[0].urlPrefix", 3, "not a repository URL prefix"},
		{"token over ssh", "repoCredentials:\n  - {urlPrefix: 'git@git.example.com:team/', tokenFile: /t}\n", "repoCredentials[0].tokenFile", 3, "HTTPS only"},
		{"key over https", "repoCredentials:\n  - {urlPrefix: https://git.example.com/, sshKeyFile: /k, knownHostsFile: /h}\n", "repoCredentials[0].sshKeyFile", 3, "SSH only"},
		{"key without known_hosts", "repoCredentials:\n  - urlPrefix: ssh://git@git.example.com/team\n    sshKeyFile: /k\n", "repoCredentials[0].knownHostsFile", 3, "never accepts a host key it cannot check"},
		{"inline token", "repoCredentials:\n  - {urlPrefix: https://git.example.com/, token: abc}\n", "repoCredentials[0].token", 3, "never written in the config"},
		{"inline password", "repoCredentials:\n  - {urlPrefix: https://git.example.com/, password: abc}\n", "repoCredentials[0].password", 3, "never written in the config"},
		{"unknown key", "repoCredentials:\n  - {urlPrefix: https://git.example.com/, tokenFile: /t, insecure: true}\n", "repoCredentials[0].insecure", 3, "unknown key"},
		{"username without token", "repoCredentials:\n  - {urlPrefix: 'git@git.example.com:t/', sshKeyFile: /k, knownHostsFile: /h, username: me}\n", "repoCredentials[0].username", 3, "tokenFile only"},
		{"CA over ssh", "repoCredentials:\n  - {urlPrefix: 'git@git.example.com:t/', sshKeyFile: /k, knownHostsFile: /h, caFile: /ca}\n", "repoCredentials[0].caFile", 3, "HTTPS only"},
		{"prefix twice", "repoCredentials:\n  - {urlPrefix: https://git.example.com/team/, tokenFile: /t}\n  - {urlPrefix: https://git.example.com/team, tokenFile: /u}\n", "repoCredentials[1].urlPrefix", 4, "give each prefix once"},
		{"not a list", "repoCredentials: {urlPrefix: https://git.example.com/}\n", "repoCredentials", 2, "must be a list"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(argo + tt.in))
			if err == nil {
				t.Fatalf("accepted: %+v", c.RepoCredentials)
			}
			es, ok := err.(Errors)
			if !ok {
				t.Fatalf("error %T %v", err, err)
			}
			if strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), ":pw@") {
				t.Errorf("a secret is echoed: %v", err)
			}
			for _, e := range es {
				if e.Key == tt.key && e.Line == tt.line && strings.Contains(e.Msg, tt.msg) {
					return
				}
			}
			t.Errorf("errors %q lack %s at line %d saying %q", es.Error(), tt.key, tt.line, tt.msg)
		})
	}
}
