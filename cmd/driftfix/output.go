package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// outputFlag is a command's output format, given as -o or --output (as
// kubectl and argocd take it) or --format (driftfix's older name, kept).
type outputFlag struct {
	fs      *flag.FlagSet
	values  map[string]*string // by flag name
	allowed []string
}

// registerOutput registers -o, --output and --format on fs with the formats
// allowed, the first the default.
func registerOutput(fs *flag.FlagSet, allowed ...string) *outputFlag {
	of := &outputFlag{fs: fs, values: map[string]*string{}, allowed: allowed}
	usage := "output format: " + orList(allowed)
	of.values["o"] = fs.String("o", allowed[0], usage)
	of.values["output"] = fs.String("output", allowed[0], usage+" (same as -o)")
	of.values["format"] = fs.String("format", allowed[0], usage+" (same as -o)")
	return of
}

// given returns the flags set on the command line, in the order o, output,
// format, with their values.
func (of *outputFlag) given() (names, values []string) {
	set := map[string]bool{}
	of.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, n := range []string{"o", "output", "format"} {
		if set[n] {
			names = append(names, n)
			values = append(values, *of.values[n])
		}
	}
	return names, values
}

// value is the format asked for: an error names the flag as it was given.
func (of *outputFlag) value() (string, error) {
	names, values := of.given()
	if len(names) == 0 {
		return of.allowed[0], nil
	}
	for i := 1; i < len(values); i++ {
		if values[i] != values[0] {
			return "", fmt.Errorf("%s %q and %s %q disagree: give the output format once", flagName(names[0]), values[0], flagName(names[i]), values[i])
		}
	}
	if !slices.Contains(of.allowed, values[0]) {
		return "", fmt.Errorf("%s %q: want %s", flagName(names[0]), values[0], orList(of.allowed))
	}
	return values[0], nil
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
