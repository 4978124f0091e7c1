package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// given is one value a flag received, with the name it was typed as.
type given struct{ name, value string }

// recorded is a string flag that keeps every value it is given, in order, so
// that two values that disagree are refused instead of the last one winning.
type recorded struct {
	name   string // the flag's long name
	values *[]given
	cur    string
}

func (r *recorded) String() string { return r.cur }
func (r *recorded) Type() string   { return "string" }
func (r *recorded) Set(v string) error {
	r.cur = v
	*r.values = append(*r.values, given{r.name, v})
	return nil
}

// typedAs returns the names each value of the flags was typed as, in order:
// the shorthand "o" for -o json, else the long name. pflag hands the value
// to one flag whatever its spelling, so the spelling is read from args.
func typedAs(args []string, values []given, short map[string]string) []given {
	longOf := map[string]string{}
	for long, s := range short {
		longOf[s] = long
	}
	seen := map[string][]bool{}
	for _, a := range args {
		if a == "--" {
			break
		}
		switch {
		case strings.HasPrefix(a, "--"):
			n, _, _ := strings.Cut(a[2:], "=")
			if _, ok := short[n]; ok {
				seen[n] = append(seen[n], false)
			}
		case strings.HasPrefix(a, "-") && len(a) >= 2:
			if long, ok := longOf[a[1:2]]; ok {
				seen[long] = append(seen[long], true)
			}
		}
	}
	out := make([]given, len(values))
	next := map[string]int{}
	for i, v := range values {
		out[i] = v
		s, ok := short[v.name]
		if !ok {
			continue
		}
		if k := next[v.name]; k < len(seen[v.name]) && len(seen[v.name]) == count(values, v.name) && seen[v.name][k] {
			out[i].name = s
		}
		next[v.name]++
	}
	return out
}

func count(vs []given, name string) int {
	n := 0
	for _, v := range vs {
		if v.name == name {
			n++
		}
	}
	return n
}

// outputs is a command's output format, given as -o or --output (as
// kubectl and argocd take it) or --format (driftfix's older name, kept and
// hidden).
type outputs struct {
	args    []string
	values  []given
	allowed []string
}

// addOutput registers -o/--output and the hidden --format on fs with the
// formats allowed, the first the default, and completes their values.
func (c *cli) addOutput(cmd *cobra.Command, allowed ...string) *outputs {
	o := &outputs{args: c.args, allowed: allowed}
	fs := cmd.Flags()
	usage := "output format: " + orList(allowed)
	fs.VarP(&recorded{name: "output", values: &o.values, cur: allowed[0]}, "output", "o", usage)
	fs.Var(&recorded{name: "format", values: &o.values, cur: allowed[0]}, "format", usage+" (the older name of -o)")
	_ = fs.MarkHidden("format")
	complete := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	}
	_ = cmd.RegisterFlagCompletionFunc("output", complete)
	_ = cmd.RegisterFlagCompletionFunc("format", complete)
	return o
}

// given returns the values set on the command line, in order, each with the
// flag's name as typed (o, output or format).
func (o *outputs) given() []given {
	return typedAs(o.args, o.values, map[string]string{"output": "o"})
}

// value is the format asked for: an error names the flag as it was given.
func (o *outputs) value() (string, error) {
	return pickFormat(o.given(), o.allowed)
}

// pickFormat is the one format the flags given agree on, allowed[0] when
// none was given.
func pickFormat(g []given, allowed []string) (string, error) {
	if len(g) == 0 {
		return allowed[0], nil
	}
	for _, v := range g[1:] {
		if v.value != g[0].value {
			return "", fmt.Errorf("%s %q and %s %q disagree: give the output format once", flagName(g[0].name), g[0].value, flagName(v.name), v.value)
		}
	}
	if !slices.Contains(allowed, g[0].value) {
		return "", fmt.Errorf("%s %q: want %s", flagName(g[0].name), g[0].value, orList(allowed))
	}
	return g[0].value, nil
}

func flagName(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

var _ pflag.Value = (*recorded)(nil)
