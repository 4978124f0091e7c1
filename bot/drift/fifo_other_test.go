//go:build !unix

package drift

import "errors"

func mkfifo(string) error { return errors.New("not supported") }
