package deploy

import (
	"fmt"
	"strings"
)

// READMECommand returns the words of the one line of the README that
// starts with prefix, quotes removed (the README's commands use no escapes),
// so that tests run the README's install commands as written:
// READMECommand(readme, "helm install driftfix deploy/chart ").
func READMECommand(readme []byte, prefix string) ([]string, error) {
	var found []string
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("the README has two lines starting %q", prefix)
		}
		words, err := shellWords(line)
		if err != nil {
			return nil, fmt.Errorf("the README's line starting %q: %w", prefix, err)
		}
		found = words
	}
	if found == nil {
		return nil, fmt.Errorf("the README has no line starting %q", prefix)
	}
	return found, nil
}

// shellWords splits a command line into words as a POSIX shell does for a
// line without expansions: blanks separate words, single quotes keep
// everything, double quotes keep everything but a backslash before " \ $ or
// `, and a backslash outside quotes keeps the next character.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				cur.WriteRune(rs[j])
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("a single quote is not closed")
			}
			i = j
		case r == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]) {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, fmt.Errorf("a double quote is not closed")
			}
			i = j
		case r == '\\':
			inWord = true
			if i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			}
		default:
			inWord = true
			cur.WriteRune(r)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
