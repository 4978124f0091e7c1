package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// parseArgocdOpts reads ARGOCD_OPTS as the argocd CLI reads it: the words
// split as a shell splits them; "--key VALUE" sets key; "--key" followed by
// another "--key" or by nothing is "true"; "--key=VALUE" sets key unless the
// other form set it too. Any other word is an error.
func parseArgocdOpts(s string) (map[string]string, error) {
	words, err := shellSplit(s)
	if err != nil {
		return nil, err
	}
	opts := map[string]string{}
	key := ""
	for _, w := range words {
		switch {
		case strings.HasPrefix(w, "--"):
			if key != "" {
				opts[key] = "true"
			}
			key = strings.TrimPrefix(w, "--")
		case key != "":
			opts[key], key = w, ""
		default:
			return nil, fmt.Errorf("%q is neither --FLAG nor the value of one", w)
		}
	}
	if key != "" {
		opts[key] = "true"
	}
	for k, v := range opts {
		if name, value, ok := strings.Cut(k, "="); ok && v == "true" {
			if _, set := opts[name]; !set {
				opts[name] = value
			}
		}
	}
	return opts, nil
}

// shellSplit splits a line into words as a POSIX shell does with no
// expansions: blanks separate words; single quotes keep everything; double
// quotes keep everything but a backslash before $ ` " \ or a newline; a
// backslash outside quotes keeps the next character.
func shellSplit(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 == len(s) {
				return nil, errors.New("it ends with a backslash that escapes nothing")
			}
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
			}
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("a single quote is not closed")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] != '\n' {
						cur.WriteByte(s[i])
					}
					continue
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, errors.New("a double quote is not closed")
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// argocdOptsUnsupported are argocd CLI flags that ask for a way of reaching
// Argo CD driftfix does not have: said as an error, not ignored.
var argocdOptsUnsupported = map[string]string{
	"core":                   "--core reads Kubernetes directly, without argocd-server; driftfix reads argocd-server's API",
	"port-forward":           "--port-forward reaches argocd-server through the Kubernetes API, which driftfix does not do: run kubectl -n argocd port-forward svc/argocd-server 8080:443 and give --server localhost:8080 --insecure",
	"port-forward-namespace": "--port-forward-namespace goes with --port-forward, which driftfix does not do",
	"grpc-web-root-path":     "--grpc-web-root-path serves Argo CD under a path, which driftfix does not read: give --server https://HOST/PATH",
}

// knownArgocdOpt are the ARGOCD_OPTS keys driftfix reads.
var knownArgocdOpt = map[string]bool{"server": true, "auth-token": true, "insecure": true, "plaintext": true, "grpc-web": true,
	"server-crt": true, "config": true, "argocd-context": true}

// applyArgocdOpts takes from ARGOCD_OPTS the connection flags not typed on
// the command line, as the argocd CLI takes them as its flags' defaults. It
// returns the keys driftfix does not use, to be said.
func (a *argoFlags) applyArgocdOpts(raw string) (unused []string, err error) {
	opts, err := parseArgocdOpts(raw)
	if err != nil {
		return nil, fmt.Errorf("ARGOCD_OPTS: %w", err)
	}
	typed := func(names ...string) bool {
		for _, n := range names {
			if a.cmd.Flags().Changed(n) {
				return true
			}
		}
		return false
	}
	boolOpt := func(k string, dst *bool) error {
		b, err := strconv.ParseBool(opts[k])
		if err != nil {
			return fmt.Errorf("ARGOCD_OPTS --%s %q: want true or false", k, opts[k])
		}
		*dst = b
		return nil
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		if why, ok := argocdOptsUnsupported[k]; ok && v != "false" && v != "" {
			return nil, fmt.Errorf("ARGOCD_OPTS: %s", why)
		}
		switch k {
		case "server":
			if !typed("argocd-server", "server") {
				a.server, a.serverFrom = v, "ARGOCD_OPTS --server"
			}
		case "auth-token":
			a.optsToken = v
		case "insecure":
			if !typed("argocd-insecure", "insecure") {
				err = boolOpt(k, &a.insecure)
			}
		case "plaintext":
			if !typed("plaintext") {
				err = boolOpt(k, &a.plaintext)
			}
		case "grpc-web":
			if !typed("grpc-web") {
				err = boolOpt(k, &a.grpcWeb)
			}
		case "server-crt":
			if !typed("argocd-ca-file") {
				a.caFile = v
			}
		case "config":
			if !typed("argocd-config") {
				a.argocdConfig = v
			}
		case "argocd-context":
			if !typed("argocd-context") {
				a.argocdContext = v
			}
		default:
			// --key=VALUE was read as key above; only its name is said,
			// never a value (it may be a token).
			name, _, split := strings.Cut(k, "=")
			if _, ok := argocdOptsUnsupported[name]; ok || (split && knownArgocdOpt[name]) {
				break
			}
			if !slices.Contains(unused, "--"+name) {
				unused = append(unused, "--"+name)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return unused, nil
}
