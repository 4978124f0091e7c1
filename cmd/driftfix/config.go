package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/driftfix/driftfix/bot/config"
)

// cmdConfig handles `driftfix config validate FILE`: every problem is printed
// with its line and key.
func cmdConfig(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) != 2 || args[0] != "validate" {
		return exitUsage, fmt.Errorf("usage: driftfix config validate FILE")
	}
	file := args[1]
	_, err := config.Load(file)
	var es config.Errors
	switch {
	case errors.As(err, &es):
		for _, e := range es {
			fmt.Fprintf(stderr, "%s:%d: %s: %s\n", file, e.Line, e.Key, e.Msg)
		}
		return exitUsage, fmt.Errorf("%d %s in %s", len(es), plural(len(es), "problem", "problems"), file)
	case err != nil:
		return exitUsage, err
	}
	fmt.Fprintf(stdout, "%s: valid\n", file)
	return exitClean, nil
}
